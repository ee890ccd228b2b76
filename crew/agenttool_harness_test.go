package crew

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/flags"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/claude"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/prompt"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/tool/builtin"
)

// rig is an in-process runtime on the fake API with the real client.
type rig struct {
	t    testing.TB
	dir  string
	srv  *fakeapi.Server
	rt   *Crew
	reg  *task.Registry
	lead *Agent
}

type rigConfig struct {
	policy fakeapi.Policy
	flags  []string
	cache  fakeapi.CacheConfig
	// extra are more tools after the built-in ones (MCP tools, say).
	extra []tool.Tool
}

func newRig(t testing.TB, rc rigConfig) *rig {
	t.Helper()
	r := &rig{t: t, dir: t.TempDir()}
	home := t.TempDir()
	r.srv = fakeapi.New(fakeapi.Config{Policy: rc.policy, Cache: rc.cache})
	t.Cleanup(r.srv.Close)
	model, err := claude.New(claude.Config{APIKey: "k", BaseURL: r.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := flags.Resolve(flags.Config{CLI: rc.flags})
	if err != nil {
		t.Fatal(err)
	}
	r.reg, err = task.NewRegistry(task.Config{Home: home, SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = r.reg.Close(ctx)
	})
	r.rt, err = New(Config{
		Model: model, Catalog: agentdef.NewCatalog(agentdef.BuiltIns(fs)), Flags: fs,
		Tools: withAgentTool(nil, append(builtin.All(builtin.Config{}), rc.extra...)...), Tasks: r.reg, Cwd: r.dir, SessionID: "s1",
		Environment: prompt.Environment{Platform: "linux", Date: "2026-11-30"},
		ReadOnly:    func(n string) bool { return n == "Read" || n == "Glob" || n == "Grep" || n == "Bash" },
	})
	if err != nil {
		t.Fatal(err)
	}
	r.lead, err = r.rt.NewLead(t.Context(), LeadConfig{Model: "claude-sonnet-5-5", Mode: "bypassPermissions"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.lead.Close)
	return r
}

// withAgentTool is a runtime tool factory: the Agent tool (with mates as
// its teammate spawner) in front of tools, and more built from the runtime.
func withAgentTool(mates TeammateSpawner, tools ...tool.Tool) func(*Crew) []tool.Tool {
	return func(rt *Crew) []tool.Tool {
		return append([]tool.Tool{NewAgentTool(AgentToolConfig{Runtime: rt, Teammates: mates})}, tools...)
	}
}

// send runs one lead turn.
func (r *rig) send(text string) *llmResult {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(r.t.Context(), 60*time.Second)
	defer cancel()
	res, err := r.lead.Engine().Send(ctx, []llm.Block{llm.Text(text)}, "")
	if err != nil {
		r.t.Fatalf("lead: %v", err)
	}
	return &llmResult{Text: res.Text}
}

type llmResult struct{ Text string }

// waitIdle waits until no background task will notify the lead any more and
// returns what its queue holds.
func (r *rig) waitIdle() []task.Item {
	r.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for r.reg.Outstanding(r.lead.Queue()) > 0 {
		if time.Now().After(deadline) {
			r.t.Fatal("background tasks did not finish")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return r.lead.Queue().Drain()
}

// notified waits for the background work to end and counts the distinct
// task notifications the lead received: injected into its requests (first
// user message containing leadMarker) or still waiting in its queue.
func (r *rig) notified(leadMarker string) int {
	r.t.Helper()
	ids := map[string]int{}
	for _, it := range r.waitIdle() {
		if it.Notification != nil {
			ids[it.Notification.TaskID]++
		}
	}
	seen := map[string]bool{}
	for _, rec := range r.srv.Requests() {
		if rec.Request == nil || !strings.Contains(rec.Request.FirstUserText(), leadMarker) {
			continue
		}
		for _, m := range rec.Request.Messages {
			for _, b := range m.Content {
				for _, id := range taskIDs(b.Text) {
					if !seen[id] {
						seen[id] = true
						ids[id]++
					}
				}
			}
		}
	}
	for id, n := range ids {
		if n != 1 {
			r.t.Fatalf("task %s was notified %d times", id, n)
		}
	}
	return len(ids)
}

// taskIDs extracts the <task-id> values of notifications in s.
func taskIDs(s string) []string {
	var out []string
	for {
		i := strings.Index(s, "<task-id>")
		if i < 0 {
			return out
		}
		s = s[i+len("<task-id>"):]
		j := strings.Index(s, "</task-id>")
		if j < 0 {
			return out
		}
		out = append(out, s[:j])
		s = s[j:]
	}
}

func (r *rig) write(name, content string) string {
	p := filepath.Join(r.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
	return p
}

// script answers by the last user text and the turn, for several agents.
type script struct {
	mu    sync.Mutex
	rules []scriptRule
}

type scriptRule struct {
	match func(*fakeapi.Request) bool
	reply func(*fakeapi.Request) fakeapi.Reply
}

func (s *script) on(match func(*fakeapi.Request) bool, reply func(*fakeapi.Request) fakeapi.Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rules = append(s.rules, scriptRule{match, reply})
}

func (s *script) policy(r *fakeapi.Request) fakeapi.Reply {
	s.mu.Lock()
	rules := s.rules
	s.mu.Unlock()
	for _, rule := range rules {
		if rule.match(r) {
			return rule.reply(r)
		}
	}
	return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "no rule for " + r.LastUserText()}}
}

func lastUserHas(s string) func(*fakeapi.Request) bool {
	return func(r *fakeapi.Request) bool { return strings.Contains(r.LastUserText(), s) }
}

func firstUserAt(s string, turn int) func(*fakeapi.Request) bool {
	return func(r *fakeapi.Request) bool { return strings.Contains(r.FirstUserText(), s) && r.Turn() == turn }
}

func reply(blocks ...fakeapi.Block) func(*fakeapi.Request) fakeapi.Reply {
	return func(*fakeapi.Request) fakeapi.Reply { return fakeapi.Reply{Content: blocks} }
}

func say(s string) func(*fakeapi.Request) fakeapi.Reply {
	return func(*fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply(s) }
}

func call(name string, input any) fakeapi.Block { return fakeapi.ToolUseBlock("", name, input) }
