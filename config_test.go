package cohort

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestAskUser: AskUserQuestion is offered only with an AskUser callback,
// and the answer reaches the model.
func TestAskUser(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	offered := make(chan bool, 4)
	e.rt.on("pick a color", func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			offered <- r.HasTool("AskUserQuestion")
			if !r.HasTool("AskUserQuestion") {
				return fakeapi.TextReply("cannot ask")
			}
			return fakeapi.Reply{Content: []fakeapi.Block{use("AskUserQuestion", map[string]any{"questions": []any{map[string]any{
				"question": "Which color?", "header": "Color", "multiSelect": false,
				"options": []any{map[string]any{"label": "Blue", "description": "calm"}, map[string]any{"label": "Red", "description": "loud"}}}}})}}
		}
		return fakeapi.TextReply("user said: " + r.LastToolResultText())
	})
	if res := last(collect(t, e.open(e.config()), "pick a color")); res.Result != "cannot ask" || <-offered {
		t.Fatalf("without AskUser the tool was offered: %q", res.Result)
	}
	var asked AskRequest
	cfg := e.config()
	cfg.AskUser = func(ctx context.Context, req AskRequest) (map[string]string, error) {
		asked = req
		return map[string]string{"Which color?": "Blue"}, nil
	}
	s := e.open(cfg)
	res := last(collect(t, s, "pick a color"))
	if !<-offered || !strings.Contains(res.Result, "Which color? → Blue") {
		t.Fatalf("result %q", res.Result)
	}
	if asked.AgentID != s.Agents()[0].ID || len(asked.Questions) != 1 || asked.Questions[0].Options[1].Label != "Red" {
		t.Errorf("AskUser got %+v", asked)
	}
}

// TestGoHooks: a Config hook sees Claude Code's hook input and its answer
// decides the call, like a hook command's.
func TestGoHooks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.rt.on("run a command", func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			return fakeapi.Reply{Content: []fakeapi.Block{use("Bash", map[string]any{"command": "echo hi", "description": "say hi"})}}
		}
		return fakeapi.TextReply("tool said: " + r.LastToolResultText())
	})
	var mu sync.Mutex
	var inputs []map[string]any
	cfg := e.config()
	cfg.PermissionMode = "bypassPermissions"
	cfg.Hooks = []Hook{{Event: "PreToolUse", Matcher: "Bash", Func: func(ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
		var m map[string]any
		if err := json.Unmarshal(in, &m); err != nil {
			return nil, err
		}
		mu.Lock()
		inputs = append(inputs, m)
		mu.Unlock()
		return json.RawMessage(`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no shell today"}}`), nil
	}}}
	res := last(collect(t, e.open(cfg), "run a command"))
	if !strings.Contains(res.Result, "no shell today") {
		t.Fatalf("the hook did not deny the call: %q", res.Result)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(inputs) != 1 || inputs[0]["tool_name"] != "Bash" || inputs[0]["hook_event_name"] != "PreToolUse" {
		t.Fatalf("hook inputs %v", inputs)
	}
}

// TestCanUseToolNamesTheAgent: CanUseTool is asked for every agent's
// calls, and each request names the agent that asks.
func TestCanUseToolNamesTheAgent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.rt.on("SUB-WRITE", func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			return fakeapi.Reply{Content: []fakeapi.Block{use("Write", map[string]any{"file_path": filepath.Join(e.dir, "sub.txt"), "content": "x"})}}
		}
		return fakeapi.TextReply("sub: " + r.LastToolResultText())
	})
	e.rt.on("both write", func(r *fakeapi.Request) fakeapi.Reply {
		switch r.Turn() {
		case 0:
			return fakeapi.Reply{Content: []fakeapi.Block{use("Write", map[string]any{"file_path": filepath.Join(e.dir, "lead.txt"), "content": "x"})}}
		case 1:
			return fakeapi.Reply{Content: []fakeapi.Block{use("Agent", map[string]any{"description": "writer", "prompt": "SUB-WRITE", "subagent_type": "general-purpose"})}}
		}
		return fakeapi.TextReply("done")
	})
	var mu sync.Mutex
	kinds := map[string]string{}
	cfg := e.config()
	cfg.CanUseTool = func(ctx context.Context, req PermissionRequest) (Decision, error) {
		mu.Lock()
		defer mu.Unlock()
		kinds[req.AgentKind] = req.AgentID
		return Decision{Allow: req.AgentKind == "lead", Message: "not for subagents"}, nil
	}
	s := e.open(cfg)
	collect(t, s, "both write")
	mu.Lock()
	defer mu.Unlock()
	if kinds["lead"] != s.Agents()[0].ID || kinds["subagent"] == "" || kinds["subagent"] == kinds["lead"] {
		t.Fatalf("CanUseTool saw %v", kinds)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "lead.txt")); err != nil {
		t.Errorf("the lead's allowed Write did not run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "sub.txt")); err == nil {
		t.Error("the subagent's denied Write ran")
	}
}

// TestProactiveAndSettings: Proactive keeps the default system prompt
// under an agent's own; a Settings layer's rules apply: its deny of the
// whole Read tool keeps Read from the lead (as Claude Code does), and a
// Read call made anyway fails.
func TestProactiveAndSettings(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	systems := make(chan string, 4)
	e.rt.on("hello", func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			if r.HasTool("Read") {
				t.Errorf("the lead was offered Read, which the Settings layer denies whole")
			}
			systems <- r.SystemText()
			return fakeapi.Reply{Content: []fakeapi.Block{use("Read", map[string]any{"file_path": filepath.Join(e.dir, "x")})}}
		}
		return fakeapi.TextReply(r.LastToolResultText())
	})
	for _, proactive := range []bool{false, true} {
		cfg := e.config()
		cfg.Agents = `{"greeter": {"description": "greets", "prompt": "GREETER-PROMPT: you greet."}}`
		cfg.Agent, cfg.Proactive = "greeter", proactive
		cfg.Settings = []string{`{"permissions": {"deny": ["Read"]}}`}
		res := last(collect(t, e.open(cfg), "hello"))
		if !strings.Contains(res.Result, `no tool named "Read"`) {
			t.Errorf("proactive %v: the Settings layer's deny did not apply: %q", proactive, res.Result)
		}
	}
	plain, pro := <-systems, <-systems
	if !strings.Contains(plain, "GREETER-PROMPT") || !strings.Contains(pro, "GREETER-PROMPT") || len(pro) < len(plain)+500 {
		t.Fatalf("the proactive prompt (%d bytes) does not add the default to the agent's (%d bytes)", len(pro), len(plain))
	}
}

// TestAlwaysAllowKeepsTheRule: a CanUseTool answer with AlwaysAllow lets
// the call run, holds for the next such call (no second question), and is
// saved to the project's .cohort/settings.local.json; the request carried
// the checks' suggestion.
func TestAlwaysAllowKeepsTheRule(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.rt.on("touch twice", func(r *fakeapi.Request) fakeapi.Reply {
		switch r.Turn() {
		case 0:
			return fakeapi.Reply{Content: []fakeapi.Block{use("Bash", map[string]any{"command": "touch one.txt"})}}
		case 1:
			return fakeapi.Reply{Content: []fakeapi.Block{use("Bash", map[string]any{"command": "touch two.txt"})}}
		}
		return fakeapi.TextReply("touched")
	})
	cfg := e.config()
	cfg.Sandbox = "off"
	var asked []PermissionRequest
	cfg.CanUseTool = func(ctx context.Context, req PermissionRequest) (Decision, error) {
		asked = append(asked, req)
		return Decision{Allow: true, AlwaysAllow: req.Suggestions}, nil
	}
	s := e.open(cfg)
	if res := last(collect(t, s, "touch twice")); res.IsError {
		t.Fatalf("run failed: %s", res.Result)
	}
	if len(asked) != 1 || !slices.Equal(asked[0].Suggestions, []string{"Bash(touch:*)"}) {
		t.Fatalf("asked %d times, suggestions %v; want once, [Bash(touch:*)]", len(asked), asked)
	}
	for _, f := range []string{"one.txt", "two.txt"} {
		if _, err := os.Stat(filepath.Join(e.dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	data, err := os.ReadFile(filepath.Join(e.dir, ".cohort", "settings.local.json"))
	if err != nil || !strings.Contains(string(data), `"Bash(touch:*)"`) {
		t.Errorf("settings.local.json = %q, %v; want the rule", data, err)
	}
}

// TestStatusLine: the settings' statusLine command, the project's over
// the user's; none when the winner is not a command.
func TestStatusLine(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for path, body := range map[string]string{
		filepath.Join(e.home, ".claude", "settings.json"): `{"statusLine": {"type": "command", "command": "echo user"}}`,
		filepath.Join(e.dir, ".claude", "settings.json"):  `{"statusLine": {"type": "command", "command": "echo project", "padding": 0}}`,
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := e.open(e.config()).StatusLine(); got != "echo project" {
		t.Errorf("StatusLine = %q, want the project's", got)
	}
	cfg := e.config()
	cfg.Settings = []string{`{"statusLine": {"type": "static", "command": "x"}}`}
	if got := e.open(cfg).StatusLine(); got != "" {
		t.Errorf("StatusLine of a non-command = %q", got)
	}
}
