package permission

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakePrompter answers with a fixed decision and records requests.
type fakePrompter struct {
	d    PromptDecision
	err  error
	reqs []PromptRequest
}

func (p *fakePrompter) Prompt(_ context.Context, req PromptRequest) (PromptDecision, error) {
	p.reqs = append(p.reqs, req)
	return p.d, p.err
}

func TestHeadlessTellsHowToAllow(t *testing.T) {
	f := newFixture(t)
	c := f.checkerWith(ModeDefault, nil, nil, nil)
	out, err := c.Resolve(t.Context(), bash("git push origin main && make deploy"), nil)
	if err != nil || out.Allow || !out.Prompted {
		t.Fatalf("outcome = %+v, %v", out, err)
	}
	for _, want := range []string{"Permission to use Bash was denied", "non-interactive",
		`--allowedTools "Bash(git push:*),Bash(make:*)"`, ".cohort/settings.json", "--permission-mode"} {
		if !strings.Contains(out.Message, want) {
			t.Errorf("message %q lacks %q", out.Message, want)
		}
	}
}

func TestHeadlessWithoutSuggestion(t *testing.T) {
	d, err := Headless{}.Prompt(t.Context(), PromptRequest{ToolName: "Bash", Reason: "It needs approval."})
	if err != nil || d.Allow || !strings.Contains(d.Message, "--allowedTools") {
		t.Fatalf("decision = %+v, %v", d, err)
	}
}

func TestResolve(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	t.Run("allowed without asking", func(t *testing.T) {
		p := &fakePrompter{}
		out, err := f.checkerWith(ModeDefault, nil, nil, nil).Resolve(ctx, read("src/main.go"), p)
		if err != nil || !out.Allow || out.Prompted || len(p.reqs) != 0 {
			t.Fatalf("outcome = %+v, %v", out, err)
		}
	})
	t.Run("denied without asking", func(t *testing.T) {
		p := &fakePrompter{d: PromptDecision{Allow: true}}
		out, _ := f.checkerWith(ModeDefault, nil, denyRm, nil).Resolve(ctx, bash("rm x"), p)
		if out.Allow || out.Prompted || !strings.Contains(out.Message, "Bash(rm:*)") {
			t.Fatalf("outcome = %+v", out)
		}
	})
	t.Run("always allow", func(t *testing.T) {
		c := f.checkerWith(ModeDefault, nil, nil, nil)
		p := &fakePrompter{d: PromptDecision{Allow: true, Updates: []RuleUpdate{{Type: UpdateAddRules, Behavior: Allow,
			Destination: DestSession, Rules: []RuleValue{{ToolName: "Bash", RuleContent: "make:*"}}}}}}
		req := bash("make test")
		req.ToolUseID, req.AgentID = "tu_1", "agent-1"
		out, err := c.Resolve(ctx, req, p)
		if err != nil || !out.Allow || out.UpdateErr != nil {
			t.Fatalf("outcome = %+v, %v", out, err)
		}
		got := p.reqs[0]
		if got.ToolName != "Bash" || got.ToolUseID != "tu_1" || got.AgentID != "agent-1" || got.Reason == "" ||
			len(got.Suggestions) != 1 || got.Suggestions[0].Rules[0].String() != "Bash(make:*)" {
			t.Fatalf("prompt request = %+v", got)
		}
		expect(t, c, bash("make all"), Allow)
	})
	t.Run("always allow offers only what is missing", func(t *testing.T) {
		// Through the relay, a chain whose go test was already allowed
		// offered Bash(go test:*) again beside the git rules it lacked.
		c := f.checkerWith(ModeDefault, []string{"Bash(go test:*)"}, nil, nil)
		d := c.Check(ctx, bash("go test ./... && git add x.go && git commit -m fix"))
		var got []string
		for _, u := range d.Suggestions {
			for _, r := range u.Rules {
				got = append(got, r.String())
			}
		}
		if d.Behavior != Ask || strings.Join(got, " ") != "Bash(git add:*) Bash(git commit:*)" {
			t.Fatalf("decision %v, suggestions %v; want Ask with the git rules only", d.Behavior, got)
		}
	})
	t.Run("nobody asked cannot answer a fail-closed ask", func(t *testing.T) {
		// attack5 E2: a user's approve-all PermissionRequest hook answered
		// dangerouslyDisableSandbox, which needs a person in every mode.
		c := f.checkerWith(ModeDefault, nil, nil, nil)
		req := Request{Tool: "Bash", Input: []byte(`{"command": "ls", "dangerouslyDisableSandbox": true}`)}
		p := &fakePrompter{d: PromptDecision{Allow: true, NoPerson: true}}
		out, err := c.Resolve(ctx, req, p)
		if err != nil || out.Allow || !strings.Contains(out.Message, "needs a person's approval") {
			t.Fatalf("an answer with nobody asked allowed a fail-closed ask: %+v, %v", out, err)
		}
		p.d.NoPerson = false
		if out, err := c.Resolve(ctx, req, p); err != nil || !out.Allow || out.NoPerson {
			t.Fatalf("a person's allow was refused: %+v, %v", out, err)
		}
		// An ordinary ask is still answered with nobody asked, as a mode.
		p.d.NoPerson = true
		if out, err := c.Resolve(ctx, bash("make test"), p); err != nil || !out.Allow || !out.NoPerson {
			t.Fatalf("an ordinary ask: %+v, %v", out, err)
		}
	})
	t.Run("approver edits the input", func(t *testing.T) {
		c := f.checkerWith(ModeDefault, nil, denyRm, nil)
		p := &fakePrompter{d: PromptDecision{Allow: true, UpdatedInput: input("command", "make -n")}}
		out, _ := c.Resolve(ctx, bash("make"), p)
		if !out.Allow || string(out.Input) != `{"command":"make -n"}` {
			t.Fatalf("outcome = %+v", out)
		}
		p.d.UpdatedInput = input("command", "rm -rf x")
		out, _ = c.Resolve(ctx, bash("make"), p)
		if out.Allow || !strings.Contains(out.Message, "Bash(rm:*)") {
			t.Fatalf("edited input escaped a deny rule: %+v", out)
		}
	})
	t.Run("approver denies", func(t *testing.T) {
		out, _ := f.checkerWith(ModeDefault, nil, nil, nil).Resolve(ctx, bash("make"), &fakePrompter{})
		if out.Allow || out.Message == "" {
			t.Fatalf("outcome = %+v", out)
		}
	})
	t.Run("prompter fails", func(t *testing.T) {
		boom := errors.New("mailbox gone")
		out, err := f.checkerWith(ModeDefault, nil, nil, nil).Resolve(ctx, bash("make"), &fakePrompter{d: PromptDecision{Allow: true}, err: boom})
		if !errors.Is(err, boom) || out.Allow || !strings.Contains(out.Message, "mailbox gone") {
			t.Fatalf("outcome = %+v, %v", out, err)
		}
	})
	t.Run("bad update is reported, answer stands", func(t *testing.T) {
		p := &fakePrompter{d: PromptDecision{Allow: true, Updates: []RuleUpdate{{Type: "bogus", Destination: DestSession}}}}
		out, err := f.checkerWith(ModeDefault, nil, nil, nil).Resolve(ctx, bash("make"), p)
		if err != nil || !out.Allow || out.UpdateErr == nil {
			t.Fatalf("outcome = %+v, %v", out, err)
		}
	})
	t.Run("bubble reaches the prompter marked", func(t *testing.T) {
		p := &fakePrompter{}
		f.checkerWith(ModeDefault, nil, nil, nil).ForChild(ModeBubble).Resolve(ctx, bash("make"), p)
		if len(p.reqs) != 1 || !p.reqs[0].Bubble {
			t.Fatalf("requests = %+v", p.reqs)
		}
	})
}

// script writes an executable shell script and returns a command running it.
func script(t *testing.T, body string) (cmd, dir string) {
	t.Helper()
	dir = t.TempDir()
	path := filepath.Join(dir, "prompt.sh")
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return "DIR=" + dir + " " + path, dir
}

func TestCommandPrompter(t *testing.T) {
	req := PromptRequest{ToolName: "Bash", Input: input("command", "make"), ToolUseID: "tu_9", AgentID: "a1", Cwd: "/w", Reason: "needs approval"}
	tests := []struct {
		name      string
		body      string
		allow     bool
		msg       string // substring of the message
		updates   int
		wantInput string
	}{
		{name: "allow", body: `cat > "$DIR/req.json"; echo '{"behavior":"allow"}'`, allow: true},
		{name: "allow with updates and input", body: `cat >/dev/null; printf '%s\n' '{"behavior":"allow","updatedInput":{"command":"make -n"},"updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"make:*"}],"behavior":"allow","destination":"session"}]}'`,
			allow: true, updates: 1, wantInput: `{"command":"make -n"}`},
		{name: "deny with message", body: `echo '{"behavior":"deny","message":"not on Fridays"}'`, msg: "not on Fridays"},
		{name: "deny without message", body: `echo '{"behavior":"deny"}'`, msg: "denied by the permission prompt command"},
		{name: "garbage", body: `echo hello`, msg: "cannot read"},
		{name: "no output", body: `true`, msg: "no output"},
		{name: "two answers", body: `echo '{"behavior":"allow"}{"behavior":"allow"}'`, msg: "more than one JSON value"},
		{name: "unknown behavior", body: `echo '{"behavior":"maybe"}'`, msg: `behavior is "maybe"`},
		{name: "input not an object", body: `echo '{"behavior":"allow","updatedInput":"rm -rf /"}'`, msg: "updatedInput must be a JSON object"},
		{name: "non-zero exit", body: `echo '{"behavior":"allow"}'; echo oops >&2; exit 3`, msg: "failed with exit status 3: oops"},
		{name: "huge output", body: `head -c 2000000 /dev/zero | tr '\0' a`, msg: "more than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd, dir := script(t, tt.body)
			p := &Command{Command: cmd, Timeout: 10 * time.Second}
			d, err := p.Prompt(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			if d.Allow != tt.allow || !strings.Contains(d.Message, tt.msg) || len(d.Updates) != tt.updates || string(d.UpdatedInput) != tt.wantInput {
				t.Fatalf("decision = %+v", d)
			}
			if tt.name == "allow" {
				var got map[string]any
				data, _ := os.ReadFile(filepath.Join(dir, "req.json"))
				if err := json.Unmarshal(data, &got); err != nil {
					t.Fatal(err)
				}
				for _, k := range []string{"tool_name", "input", "tool_use_id", "agent_id", "cwd", "reason"} {
					if _, ok := got[k]; !ok {
						t.Errorf("request lacks %s: %s", k, data)
					}
				}
			}
		})
	}
}

func TestCommandPrompterTimeout(t *testing.T) {
	cmd, _ := script(t, `sleep 30`)
	p := &Command{Command: cmd, Timeout: 100 * time.Millisecond, Grace: 100 * time.Millisecond}
	d, err := p.Prompt(t.Context(), PromptRequest{ToolName: "Bash"})
	if err != nil || d.Allow || !strings.Contains(d.Message, "did not answer within 100ms") {
		t.Fatalf("decision = %+v, %v", d, err)
	}
}

func TestCommandPrompterIgnoresSIGTERM(t *testing.T) {
	cmd, dir := script(t, `trap '' TERM; sleep 30 & echo $! > "$DIR/pid"; wait`)
	// The timeout leaves the shell time to start and record its child's pid
	// even on a loaded machine; the test is about what happens after it.
	p := &Command{Command: cmd, Timeout: 1500 * time.Millisecond, Grace: 100 * time.Millisecond}
	d, err := p.Prompt(t.Context(), PromptRequest{ToolName: "Bash"})
	if err != nil || d.Allow {
		t.Fatalf("decision = %+v, %v", d, err)
	}
	assertDead(t, dir)
}

func TestCommandPrompterStragglerIsKilled(t *testing.T) {
	cmd, dir := script(t, `sleep 30 & echo $! > "$DIR/pid"; echo '{"behavior":"allow"}'`)
	p := &Command{Command: cmd, Timeout: 10 * time.Second, Grace: 100 * time.Millisecond}
	d, err := p.Prompt(t.Context(), PromptRequest{ToolName: "Bash"})
	if err != nil || !d.Allow {
		t.Fatalf("decision = %+v, %v", d, err)
	}
	assertDead(t, dir)
}

func TestCommandPrompterCancelled(t *testing.T) {
	cmd, _ := script(t, `sleep 30`)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	d, err := (&Command{Command: cmd}).Prompt(ctx, PromptRequest{ToolName: "Bash"})
	if !errors.Is(err, context.Canceled) || d.Allow {
		t.Fatalf("decision = %+v, %v", d, err)
	}
}

// assertDead checks that the process whose pid the script saved is gone
// (or a zombie waiting for init).
func assertDead(t *testing.T, dir string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	// SIGKILL was sent; give the kernel a moment to finish the process.
	deadline := time.Now().Add(10 * time.Second)
	for {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return // gone
		}
		if fields := strings.Fields(string(stat)); len(fields) > 2 && fields[2] == "Z" {
			return // dead, waiting to be reaped by its new parent
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d still running: %s", pid, stat)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
