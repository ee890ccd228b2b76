package hook

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/internal/proc"
	"github.com/cohort-dev/cohort/sandbox"
	"github.com/cohort-dev/cohort/settings"
	"github.com/cohort-dev/cohort/tool"
)

// realSandbox is the session's sandbox as hook.Config wants it (what
// internal/assemble gives): the writing profile of the agent's cwd.
type realSandbox struct{ sb *sandbox.Sandbox }

func (r realSandbox) Launcher(ctx context.Context, cwd string, files []string) (proc.Launcher, error) {
	return r.sb.LauncherGranting(ctx, cwd, files)
}
func (r realSandbox) Grantable(cwd, path string) error { return r.sb.Grantable(cwd, path) }
func (r realSandbox) Env() []string                    { return r.sb.Env() }
func (r realSandbox) Explain(out, cwd string) string {
	return r.sb.ExplainFor(out, cwd, sandbox.Writing)
}

// TestCommandHooksConfined runs command hooks in a real sandbox (Landlock,
// namespaces): a hook's program, whatever the model made it read, writes
// only the project and the TMPDIR, cannot read a hidden secret, gets no
// credential of Cohort's in its environment, and still speaks the protocol (stdin, JSON on
// stdout, exit 2). The refused write is named to the user with the
// settings that allow it. A hook marked "sandbox": false in a project
// settings file runs unconfined; the same key in a --settings document
// is refused and its hook runs confined.
func TestCommandHooksConfined(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	project, outside, home, secret := filepath.Join(root, "project"), filepath.Join(root, "outside"), filepath.Join(root, "home"), filepath.Join(root, "secret")
	for _, d := range []string{project, outside, home, secret} {
		if err := mkdir(d); err != nil {
			t.Fatal(err)
		}
	}
	writeFileT(t, filepath.Join(secret, "key"), "HOOK-SECRET-5d1e\n")
	sb, err := sandbox.New(sandbox.Config{SessionID: "hooks", Home: home, TempRoot: root, Secrets: []string{secret}})
	if err != nil {
		t.Skipf("no sandbox on this machine: %v", err)
	}
	t.Cleanup(func() {
		if err := sb.Close(); err != nil {
			t.Errorf("sandbox Close: %v", err)
		}
	})
	t.Setenv("ANTHROPIC_API_KEY", "HOOK-ENV-9a7c")

	confined := script(t, project, "confined.sh", `cat > "$CLAUDE_PROJECT_DIR/stdin.json"
touch `+outside+`/escaped
cat `+secret+`/key > loot 2>&1
for p in /proc/[0-9]*/environ; do tr '\0' '\n' < $p; done >> loot 2>/dev/null
touch "$TMPDIR/scratch" && echo tmp-ok >> loot
echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "confined answer"}}'`)
	free := script(t, project, "free.sh", "cat >/dev/null; touch "+outside+"/free")
	block := script(t, project, "block.sh", "cat >/dev/null; touch "+outside+"/stop; echo keep going >&2; exit 2")
	doc := `{"hooks": {
  "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "` + confined + `"},
    {"type": "command", "command": "` + free + `", "sandbox": false}]}],
  "Stop": [{"hooks": [{"type": "command", "command": "` + block + `"}]}]
}}`
	set, probs := loadSet(filepath.Join(project, ".cohort", "settings.json"), []byte(doc))
	if len(probs) > 0 {
		t.Fatalf("problems: %v", probs)
	}
	if got := set.Unsandboxed(); len(got) != 1 || got[0].Cmd != free {
		t.Fatalf("Unsandboxed = %v, want the free hook alone", got)
	} else if n := got[0].UnsandboxedNotice(); !strings.Contains(n, "settings.json:3") || !strings.Contains(n, "outside the sandbox") {
		t.Errorf("the notice does not name the file and line: %s", n)
	}
	r := NewRunner(Config{Hooks: set, ProjectDir: project, Sandbox: realSandbox{sb}, Grace: 100e6})
	s := r.For(Subject{Caller: tool.Caller{Cwd: project}})

	o := s.Fire(t.Context(), toolInput(PreToolUse, call(project, "Bash", `{"command": "make fmt"}`)))
	if o.Decision != Deny || o.Reason != "confined answer" {
		t.Errorf("the confined hook's JSON answer was lost: decision %q reason %q (%v)", o.Decision, o.Reason, o.Messages)
	}
	if in := readJSON(t, filepath.Join(project, "stdin.json")); in["tool_name"] != "Bash" {
		t.Errorf("the confined hook's stdin: %v", in)
	}
	if _, err := os.Stat(filepath.Join(outside, "escaped")); err == nil {
		t.Errorf("a confined hook wrote outside the project")
	}
	loot := readFile(t, filepath.Join(project, "loot"))
	for _, leak := range []string{"HOOK-SECRET-5d1e", "HOOK-ENV-9a7c"} {
		if strings.Contains(loot, leak) {
			t.Errorf("a confined hook read %s:\n%s", leak, loot)
		}
	}
	if !strings.Contains(loot, "tmp-ok") {
		t.Errorf("a confined hook could not write its TMPDIR:\n%s", loot)
	}
	msgs := strings.Join(o.Messages, "\n")
	for _, want := range []string{filepath.Join(outside, "escaped"), "sandbox.allowWrite", `"sandbox": false`, "settings.json:2"} {
		if !strings.Contains(msgs, want) {
			t.Errorf("the refusal message lacks %q:\n%s", want, msgs)
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "free")); err != nil {
		t.Errorf(`the hook marked "sandbox": false did not run unconfined: %v`, err)
	}

	st := s.Stop(t.Context(), StopState{})
	if !st.Block || !strings.HasSuffix(st.Reason, "\nkeep going") {
		t.Errorf("exit 2 from a confined Stop hook: block %v reason %q (its stderr, whole)", st.Block, st.Reason)
	}
	if m := strings.Join(st.Messages, "\n"); !strings.Contains(m, filepath.Join(outside, "stop")) {
		t.Errorf("the refused write of a blocking hook was not told to the user: %q", m)
	}
	if _, err := os.Stat(filepath.Join(outside, "stop")); err == nil {
		t.Errorf("a confined Stop hook wrote outside the project")
	}

	// The same opt-out from the command line: refused, and confined.
	cli := &settings.Settings{}
	cli.Add(settings.ScopeCLI, "--settings", project, []byte(`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "`+free+`", "sandbox": false}]}]}}`))
	cset, cprobs := FromSettings(cli)
	if len(cprobs) != 1 || !strings.Contains(cprobs[0].Error(), "honoured only in user, project and local settings") {
		t.Errorf("problems of a --settings opt-out: %v", cprobs)
	}
	if len(cset.Unsandboxed()) != 0 {
		t.Fatalf("a --settings document took a hook out of the sandbox")
	}
	NewRunner(Config{Hooks: cset, ProjectDir: project, Sandbox: realSandbox{sb}}).For(Subject{Caller: tool.Caller{Cwd: project}}).Stop(t.Context(), StopState{})
	if _, err := os.Stat(filepath.Join(outside, "free")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(outside, "free")); err != nil {
		t.Fatal(err)
	}
	NewRunner(Config{Hooks: cset, ProjectDir: project, Sandbox: realSandbox{sb}}).For(Subject{Caller: tool.Caller{Cwd: project}}).Stop(t.Context(), StopState{})
	if _, err := os.Stat(filepath.Join(outside, "free")); err == nil {
		t.Errorf("a --settings hook with \"sandbox\": false ran unconfined")
	}
}

// TestSandboxKeyProblems: "sandbox" is read on command hooks only, as a
// boolean, and not from an agent definition.
func TestSandboxKeyProblems(t *testing.T) {
	set, probs := loadSet("/p/.cohort/settings.json", []byte(`{"hooks": {"Stop": [{"hooks": [
  {"type": "command", "command": "a", "sandbox": "no"},
  {"type": "http", "url": "http://localhost:1/x", "sandbox": false},
  {"type": "command", "command": "b", "sandbox": true}]}]}}`))
	var got []string
	for _, p := range probs {
		got = append(got, p.Error())
	}
	text := strings.Join(got, "\n")
	if len(probs) != 2 || !strings.Contains(text, "settings.json:2") || !strings.Contains(text, "must be true or false") ||
		!strings.Contains(text, "settings.json:3") || !strings.Contains(text, "command hooks only") {
		t.Errorf("problems:\n%s", text)
	}
	if n := len(set.Unsandboxed()); n != 0 {
		t.Errorf("%d hooks unsandboxed, want none", n)
	}
	def, dprobs := FromDefinition("/p/.cohort/agents/x.md", map[string]any{"Stop": []any{map[string]any{"hooks": []any{
		map[string]any{"type": "command", "command": "c", "sandbox": false}}}}})
	if len(dprobs) != 1 || !strings.Contains(dprobs[0].Error(), "an agent definition") || len(def.Unsandboxed()) != 0 {
		t.Errorf("an agent definition's opt-out: %v", dprobs)
	}
}

// TestApprovedFileOptOutIsNotHonoured: a project settings file obeyed
// only as a person approved its content (it lies where agents' commands
// write) keeps its hooks in the sandbox: the approval covers the file,
// not the script its hook runs, which agents can rewrite there
// (attack10's o10-approved-script).
func TestApprovedFileOptOutIsNotHonoured(t *testing.T) {
	s := &settings.Settings{}
	s.Add(settings.ScopeProject, "/p/src/.cohort/settings.json", "/p", []byte(`{"hooks": {"Stop": [{"hooks": [
  {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/tools/notify.sh", "sandbox": false}]}]}}`)).Approved = true
	set, probs := FromSettings(s)
	if len(probs) != 1 || !strings.Contains(probs[0].Error(), "lies where agents' commands can write") || !strings.Contains(probs[0].Error(), "settings.json:2") {
		t.Errorf("problems of an approved file's opt-out: %v", probs)
	}
	if n := len(set.Unsandboxed()); n != 0 {
		t.Errorf("%d hooks of an approved file run unconfined, want none", n)
	}
	s.Sources[0].Approved = false
	if set, _ := FromSettings(s); len(set.Unsandboxed()) != 1 {
		t.Errorf("the same file, not inside an agents' tree, lost its opt-out")
	}
}
