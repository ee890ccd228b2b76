package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// testProviderEnv names the provider every CLI test's harness runs on
// (empty: Anthropic's API). TestScenariosOnEveryProvider sets it to run the
// multi-agent scenarios again on each OpenAI provider.
const testProviderEnv = "COHORT_TEST_PROVIDER"

// providerPaths is the fake's endpoint for each provider.
var providerPaths = map[string]string{
	providerAnthropic: "/v1/messages",
	providerOpenAI:    "/v1/chat/completions",
	providerResponses: "/v1/responses",
}

// useTestProvider puts the harness on the provider testProviderEnv names.
func (h *harness) useTestProvider() {
	if p := os.Getenv(testProviderEnv); p != "" {
		h.useProvider(p)
	}
}

// useProvider runs every agent of the harness's sessions on provider, with
// the fake as its server: the user settings name the provider and the
// OPENAI_* variables point at the fake. When the test ends, every request
// the fake saw must have come in that provider's protocol.
func (h *harness) useProvider(provider string) {
	h.t.Helper()
	path, ok := providerPaths[provider]
	if !ok {
		h.t.Fatalf("%s=%q is not one of %v", testProviderEnv, provider, providerNames)
	}
	settings := `{"provider": "` + provider + `", "model": "qwen3-coder"}`
	if provider == providerAnthropic {
		settings = `{"provider": "anthropic"}`
	}
	h.writeUserSettings(settings)
	// Also in the Claude-compatible user file, which a test that moves
	// COHORT_HOME (shortHome, for tmux) keeps.
	writeFile(h.t, filepath.Join(h.home, ".claude", "settings.json"), settings)
	h.vars["OPENAI_BASE_URL"] = h.srv.URL + "/v1"
	h.vars["OPENAI_API_KEY"] = "test-key"
	h.t.Cleanup(func() {
		for _, rec := range h.srv.Requests() {
			if rec.Path != path {
				h.t.Errorf("request %d went to %s, not %s: the test did not run on %s", rec.Index, rec.Path, path, provider)
				return
			}
		}
	})
}

// writeUserSettings writes $COHORT_HOME/settings.json.
func (h *harness) writeUserSettings(content string) {
	h.t.Helper()
	writeFile(h.t, filepath.Join(h.vars["COHORT_HOME"], "settings.json"), content)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// providerScenarios are the end-to-end tests of each way an agent is
// spawned, run again on every OpenAI provider: synchronous subagents,
// background agents (notification, the chaos loop, TaskStop, a
// grandchild, auto-backgrounding), a fork in its own worktree, and teams
// whose teammates run in-process or in tmux panes as their own cohort
// processes on the provider.
var providerScenarios = []string{
	"TestInProcessTeam",
	"TestThreeParallelSubagents",
	"TestFiveBackgroundAgentsNotifyOnce",
	"TestBackgroundNotifyLoop",
	"TestTaskStopKillsABackgroundAgent",
	"TestBackgroundGrandchildResultIsNotLost",
	"TestAutoBackgroundMovesASlowSyncAgent",
	"TestIsolatedForkEditsOnlyItsWorktree",
}

// tmuxScenarios need tmux (CI has it); without it they are left out of the
// run rather than counted as passed.
var tmuxScenarios = []string{
	"TestMixedTeamOverTmux",
	"TestTeammatePermissionsGoToTheLead",
}

// TestScenariosOnEveryProvider runs the scenarios unchanged, in a child
// test process whose harness puts them on the provider; each must pass
// there, and every request of theirs must have used the provider's
// protocol (useProvider checks).
func TestScenariosOnEveryProvider(t *testing.T) {
	if os.Getenv(testProviderEnv) != "" {
		t.Fatal("this test must not run inside a provider run (its -test.run excludes it)")
	}
	scenarios := providerScenarios
	if _, err := exec.LookPath("tmux"); err == nil {
		scenarios = append(scenarios, tmuxScenarios...)
	} else {
		t.Logf("tmux is not installed: %v are left out", tmuxScenarios)
	}
	for _, provider := range []string{providerOpenAI, providerResponses} {
		t.Run(provider, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run", "^("+strings.Join(scenarios, "|")+")$",
				"-test.count=1", "-test.v", "-test.timeout=4m")
			cmd.Env = append(os.Environ(), testProviderEnv+"="+provider)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("the scenarios failed on %s: %v\n%s", provider, err, failures(string(out), 6000))
			}
			for _, name := range scenarios {
				if !strings.Contains(string(out), "--- PASS: "+name+" ") {
					t.Errorf("%s did not pass on %s:\n%s", name, provider, tail(string(out), 3000))
				}
			}
		})
	}
}

// failures is what a failed child run said about its failures: each
// "--- FAIL" line with the indented lines that follow it, and the log lines
// of the failed tests (go test -v prints them before the verdict), cut to
// n bytes; the output's tail when nothing matched.
func failures(out string, n int) string {
	lines := strings.Split(out, "\n")
	failed := map[string]bool{}
	for _, line := range lines {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "--- FAIL: "); ok {
			failed[strings.Fields(name)[0]] = true
		}
	}
	var b strings.Builder
	for i, line := range lines {
		trimmed := strings.TrimSpace(line)
		// In -v output a test's log lines follow "=== RUN/CONT/NAME name"
		// (they are streamed, so they come before its "--- FAIL").
		var section bool
		for _, p := range []string{"=== RUN", "=== CONT", "=== NAME"} {
			if rest, ok := strings.CutPrefix(trimmed, p); ok && failed[strings.TrimSpace(rest)] {
				section = true
			}
		}
		if !section && !strings.HasPrefix(trimmed, "--- FAIL") && !strings.Contains(trimmed, "panic:") {
			continue
		}
		b.WriteString(line + "\n")
		indent := len(line) - len(strings.TrimLeft(line, " "))
		if section {
			indent = -1
		}
		for _, next := range lines[i+1:] {
			t := strings.TrimSpace(next)
			if strings.HasPrefix(t, "---") || strings.HasPrefix(t, "===") || len(next)-len(strings.TrimLeft(next, " ")) <= indent {
				break
			}
			b.WriteString(next + "\n")
		}
	}
	if b.Len() == 0 {
		return tail(out, n)
	}
	return tail(b.String(), n)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// everyProvider runs f once per provider, each on a harness on it.
func everyProvider(t *testing.T, policy func(provider string) fakeapi.Policy, f func(t *testing.T, h *harness, provider string)) {
	for _, provider := range providerNames {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, policy(provider))
			if os.Getenv(testProviderEnv) == "" {
				h.useProvider(provider)
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
						return fakeapi.Reply{Content: []fakeapi.Block{use("SendMessage", map[string]any{"to": "team-lead", "message": name + ": part done"})}}
					}
					return fakeapi.TextReply(name + " idle")
				}
			}
			if strings.Contains(first, "run the team") {
				switch turn {
				case 0:
					return fakeapi.Reply{Content: []fakeapi.Block{use("TeamCreate", map[string]any{"team_name": "crew", "description": "test team"})}}
				case 1:
					return fakeapi.Reply{Content: []fakeapi.Block{
						use("Agent", map[string]any{"description": "alice", "team_name": "crew", "name": "alice", "prompt": "alice-task: part one"}),
						use("Agent", map[string]any{"description": "bob", "team_name": "crew", "name": "bob", "prompt": "bob-task: part two"}),
					}}
				}
				return fakeapi.TextReply("noted")
			}
			return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "no rule"}}
		}
	}
	everyProvider(t, policy, func(t *testing.T, h *harness, provider string) {
		out, errOut, code := h.run("-p", "run the team", "--output-format", "json", "--teammate-mode", "in-process")
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
		var lead strings.Builder
		for _, r := range convRequests(h.srv, "run the team") {
			lead.WriteString(r.LastUserText() + "\n")
		}
		for _, want := range []string{"alice: part done", "bob: part done", `from="alice"`, `from="bob"`} {
			if !strings.Contains(lead.String(), want) {
				t.Fatalf("the lead never saw %q; it saw:\n%s", want, lead.String())
			}
		}
		if active := memberActive(h.teamConfig("crew")); active["alice"] || active["bob"] {
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
					use("Agent", map[string]any{"description": "part 1", "prompt": "part-1"}),
					use("Agent", map[string]any{"description": "part 2", "prompt": "part-2"}),
				}}
			}
			return fakeapi.TextReply("both parts done")
		}
	}
	everyProvider(t, policy, func(t *testing.T, h *harness, provider string) {
		out, errOut, code := h.run("-p", "fan out in two forks", "--output-format", "json", "--flag", "fork_subagent=on")
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
		var lead fakeapi.Recorded
		forks := map[string]fakeapi.Recorded{}
		for _, rec := range h.srv.Requests() {
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
