package print

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// everyProvider runs f once per provider, each on a harness on it.
func everyProvider(t *testing.T, policy func(provider string) fakeapi.Policy, f func(t *testing.T, h *clitest.Harness, provider string)) {
	for _, provider := range clitest.ProviderNames {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			h := clitest.New(t, policy(provider))
			if os.Getenv(clitest.ProviderEnv) == "" {
				h.UseProvider(provider)
			}
			f(t, h, provider)
		})
	}
}

// TestTeamOnEveryProvider: a lead creates a team of two in-process
// teammates; each reports to the lead by SendMessage and goes idle; the
// lead hears both and the run ends with both shut down. (The scenarios'
// TestInProcessTeam also has bob wait for alice's message: the message in
// a teammate's hands that issue 17's item 2 made count as work.)
func TestTeamOnEveryProvider(t *testing.T) {
	t.Parallel()
	policy := func(string) fakeapi.Policy {
		return func(r *fakeapi.Request) fakeapi.Reply {
			first, turn := r.FirstUserText(), r.Turn()
			for _, name := range []string{"alice", "bob"} {
				if strings.Contains(first, name+"-task") {
					if turn == 0 {
						return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("SendMessage", map[string]any{"to": "team-lead", "message": name + ": part done"})}}
					}
					return fakeapi.TextReply(name + " idle")
				}
			}
			if strings.Contains(first, "run the team") {
				switch turn {
				case 0:
					return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("TeamCreate", map[string]any{"team_name": "crew", "description": "test team"})}}
				case 1:
					return fakeapi.Reply{Content: []fakeapi.Block{
						clitest.Use("Agent", map[string]any{"description": "alice", "team_name": "crew", "name": "alice", "prompt": "alice-task: part one"}),
						clitest.Use("Agent", map[string]any{"description": "bob", "team_name": "crew", "name": "bob", "prompt": "bob-task: part two"}),
					}}
				}
				return fakeapi.TextReply("noted")
			}
			return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "no rule"}}
		}
	}
	everyProvider(t, policy, func(t *testing.T, h *clitest.Harness, provider string) {
		out, errOut, code := h.Run("-p", "run the team", "--output-format", "json", "--teammate-mode", "in-process")
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
		var lead strings.Builder
		for _, r := range clitest.ConvRequests(h.Srv, "run the team") {
			lead.WriteString(r.LastUserText() + "\n")
		}
		for _, want := range []string{"alice: part done", "bob: part done", `from="alice"`, `from="bob"`} {
			if !strings.Contains(lead.String(), want) {
				t.Fatalf("the lead never saw %q; it saw:\n%s", want, lead.String())
			}
		}
		if active := clitest.MemberActive(h.TeamConfig("crew")); active["alice"] || active["bob"] {
			t.Fatalf("teammates still active after the run: %v", active)
		}
	})
}

var directive = regexp.MustCompile(`Your directive: (part-\d)`)

// TestForksShareTheCacheOnEveryProvider: two forks start from their
// parent's conversation; on every provider they send its prefix unchanged,
// so the server's prompt cache serves it to both.
func TestForksShareTheCacheOnEveryProvider(t *testing.T) {
	t.Parallel()
	policy := func(string) fakeapi.Policy {
		return func(r *fakeapi.Request) fakeapi.Reply {
			if d := directive.FindStringSubmatch(r.LastUserText()); d != nil {
				return fakeapi.TextReply("Scope: " + d[1] + " done")
			}
			if r.Turn() == 0 {
				return fakeapi.Reply{Content: []fakeapi.Block{
					clitest.Use("Agent", map[string]any{"description": "part 1", "prompt": "part-1"}),
					clitest.Use("Agent", map[string]any{"description": "part 2", "prompt": "part-2"}),
				}}
			}
			return fakeapi.TextReply("both parts done")
		}
	}
	everyProvider(t, policy, func(t *testing.T, h *clitest.Harness, provider string) {
		out, errOut, code := h.Run("-p", "fan out in two forks", "--output-format", "json", "--flag", "fork_subagent=on")
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
		var lead fakeapi.Recorded
		forks := map[string]fakeapi.Recorded{}
		for _, rec := range h.Srv.Requests() {
			if rec.Request == nil {
				continue
			}
			if d := directive.FindStringSubmatch(rec.Request.LastUserText()); d != nil {
				forks[d[1]] = rec
			} else if rec.Request.Turn() == 0 {
				lead = rec
			}
		}
		if len(forks) != 2 || lead.Request == nil {
			t.Fatalf("%d fork requests, lead %v", len(forks), lead.Request != nil)
		}
		for d, rec := range forks {
			if rec.Usage.CacheReadInputTokens < 1024 {
				t.Errorf("fork %s read %d tokens from the cache; its parent's prefix (%d tokens) should have been cached",
					d, rec.Usage.CacheReadInputTokens, lead.Usage.InputTokens+lead.Usage.CacheCreationInputTokens)
			}
			if got, want := fmt.Sprint(rec.Request.System), fmt.Sprint(lead.Request.System); got != want {
				t.Errorf("fork %s has another system prompt than its parent", d)
			}
		}
	})
}
