package hook

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/tool"
	"github.com/google/go-cmp/cmp"
)

// records collects Observer records.
type records struct {
	mu   sync.Mutex
	list []Record
}

func (r *records) add(rec Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, rec)
}

func (r *records) all() []Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Record(nil), r.list...)
}

func TestPreToolUseAnswers(t *testing.T) {
	const specOut = `{"hookSpecificOutput": {"hookEventName": "PreToolUse", %s}}`
	tests := []struct {
		name     string
		body     string
		want     engine.HookVerdict
		reason   string // substring of the reason, when the exact text is not stable
		decision string // the Observer's label
		errs     int
	}{
		{name: "no output", body: `exit 0`, decision: "none"},
		{name: "allow", body: `echo '` + fmt.Sprintf(specOut, `"permissionDecision": "allow"`) + `'`,
			want: engine.HookVerdict{Allow: true}, decision: "allow"},
		{name: "deny by exit 2", body: `echo "writing .env files is not allowed" >&2; exit 2`,
			want: engine.HookVerdict{Deny: true, Reason: "writing .env files is not allowed"}, decision: "deny"},
		{name: "exit 2 without stderr", body: `echo '{"decision": "approve"}'; exit 2`,
			want: engine.HookVerdict{Deny: true}, reason: "exited with status 2 without saying why", decision: "deny"},
		{name: "deny by json", body: `echo '` + fmt.Sprintf(specOut, `"permissionDecision": "deny", "permissionDecisionReason": "use the staging dir"`) + `'`,
			want: engine.HookVerdict{Deny: true, Reason: "use the staging dir"}, decision: "deny"},
		{name: "deny without reason", body: `echo '` + fmt.Sprintf(specOut, `"permissionDecision": "deny"`) + `'`,
			want: engine.HookVerdict{Deny: true}, reason: "denied by the PreToolUse hook", decision: "deny"},
		{name: "legacy block", body: `echo '{"decision": "block", "reason": "legacy no"}'`,
			want: engine.HookVerdict{Deny: true, Reason: "legacy no"}, decision: "deny"},
		{name: "legacy approve", body: `echo '{"decision": "approve"}'`,
			want: engine.HookVerdict{Allow: true}, decision: "allow"},
		{name: "legacy approve loses to deny", body: `echo '{"decision": "approve", "hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "r"}}'`,
			want: engine.HookVerdict{Deny: true, Reason: "r"}, decision: "deny"},
		{name: "ask leaves it to the gate", body: `echo '` + fmt.Sprintf(specOut, `"permissionDecision": "ask"`) + `'`,
			decision: "ask"},
		{name: "updated input with allow", body: `echo '` + fmt.Sprintf(specOut, `"permissionDecision": "allow", "updatedInput": {"file_path": "/safe/x", "content": "hi"}`) + `'`,
			want: engine.HookVerdict{Allow: true, Input: json.RawMessage(`{"file_path": "/safe/x", "content": "hi"}`)}, decision: "allow"},
		{name: "updated input alone", body: `echo '` + fmt.Sprintf(specOut, `"updatedInput": {"file_path": "/safe/y"}`) + `'`,
			want: engine.HookVerdict{Input: json.RawMessage(`{"file_path": "/safe/y"}`)}, decision: "none"},
		{name: "non-blocking exit 1", body: `echo "lint crashed" >&2; exit 1`, decision: "error", errs: 1},
		{name: "killed by a signal", body: `kill -9 $$`, decision: "error", errs: 1},
		{name: "plain stdout ignored", body: `echo "all good"; echo "noise" >&2`, decision: "none"},
		{name: "garbage json denies", body: `echo '{"hookSpecificOutput": {"permissionDecision": "deny"'`,
			want: engine.HookVerdict{Deny: true}, reason: "could not be read", decision: "deny", errs: 1},
		{name: "log line before the answer denies", body: `echo "checking path"; echo '{"decision": "block", "reason": "r"}'`,
			want: engine.HookVerdict{Deny: true}, reason: "other text around its JSON answer", decision: "deny", errs: 1},
		{name: "trailing garbage denies", body: `echo '{"decision": "approve"} and more'`,
			want: engine.HookVerdict{Deny: true}, reason: "could not be read", decision: "deny", errs: 1},
		{name: "wrong field type denies", body: `echo '{"continue": "no"}'`,
			want: engine.HookVerdict{Deny: true}, reason: "could not be read", decision: "deny", errs: 1},
		{name: "unknown permissionDecision denies", body: `echo '` + fmt.Sprintf(specOut, `"permissionDecision": "Deny"`) + `'`,
			want: engine.HookVerdict{Deny: true}, reason: `not understood (permissionDecision "Deny")`, decision: "deny", errs: 1},
		{name: "unknown legacy decision denies", body: `echo '{"decision": "blocked"}'`,
			want: engine.HookVerdict{Deny: true}, reason: `not understood (decision "blocked")`, decision: "deny", errs: 1},
		{name: "updated input not an object denies", body: `echo '` + fmt.Sprintf(specOut, `"updatedInput": "rm -rf /"`) + `'`,
			want: engine.HookVerdict{Deny: true}, reason: "rewrote the input into a string", decision: "deny", errs: 1},
		{name: "continue false denies", body: `echo '{"continue": false, "stopReason": "budget exhausted"}'`,
			want: engine.HookVerdict{Deny: true, Reason: "a PreToolUse hook stopped the agent: budget exhausted"}, decision: "stop"},
		{name: "answer for another event: allow ignored", body: `echo '{"hookSpecificOutput": {"hookEventName": "PostToolUse", "permissionDecision": "allow"}}'`,
			decision: "error", errs: 1},
		{name: "answer for another event: deny honoured", body: `echo '{"hookSpecificOutput": {"hookEventName": "PostToolUse", "permissionDecision": "deny", "permissionDecisionReason": "still no"}}'`,
			want: engine.HookVerdict{Deny: true, Reason: "still no"}, decision: "deny", errs: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := script(t, dir, "hook.sh", "cat >/dev/null\n"+tt.body)
			var recs records
			r := newRunner(t, Config{Observer: recs.add}, spec{event: PreToolUse, matcher: "Write", cmd: path})
			got := r.For(Subject{Caller: tool.Caller{Cwd: dir}}).PreToolUse(t.Context(), call(dir, "Write", `{"file_path": "/x", "content": "y"}`))
			if tt.reason != "" {
				if !strings.Contains(got.Reason, tt.reason) {
					t.Errorf("reason %q does not contain %q", got.Reason, tt.reason)
				}
				got.Reason = ""
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("verdict (-want +got):\n%s", diff)
			}
			rs := recs.all()
			if len(rs) != 1 {
				t.Fatalf("%d records, want 1", len(rs))
			}
			if rs[0].Decision != tt.decision || (rs[0].Err != nil) != (tt.errs > 0) {
				t.Errorf("record decision %q err %v; want %q with %d errors", rs[0].Decision, rs[0].Err, tt.decision, tt.errs)
			}
		})
	}
}

func TestMatcherSelectsTools(t *testing.T) {
	dir := t.TempDir()
	deny := script(t, dir, "deny.sh", `echo "no $(basename $0)" >&2; exit 2`)
	r := newRunner(t, Config{}, spec{event: PreToolUse, matcher: "Write|Edit", cmd: deny})
	s := r.For(Subject{Caller: tool.Caller{Cwd: dir}})
	for tool, denied := range map[string]bool{"Write": true, "Edit": true, "NotebookEdit": false, "Read": false} {
		if got := s.PreToolUse(t.Context(), call(dir, tool, `{}`)).Deny; got != denied {
			t.Errorf("%s denied = %v, want %v", tool, got, denied)
		}
	}
}

// TestParallelHooksOneDenies runs three hooks that each wait until all
// three have started (so they can only finish if they run at the same
// time); one of them denies.
func TestParallelHooksOneDenies(t *testing.T) {
	dir := t.TempDir()
	meet := filepath.Join(dir, "meet")
	if err := os.Mkdir(meet, 0o755); err != nil {
		t.Fatal(err)
	}
	wait := `touch "` + meet + `/$1"; i=0; while [ "$(ls "` + meet + `" | wc -l)" -lt 3 ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done`
	allow := script(t, dir, "allow.sh", wait+"\n"+`echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}'`)
	deny := script(t, dir, "deny.sh", wait+"\n"+`echo "tests must pass first" >&2; exit 2`)
	var recs records
	r := newRunner(t, Config{Observer: recs.add},
		spec{event: PreToolUse, matcher: "*", cmd: allow + " a"},
		spec{event: PreToolUse, matcher: "Bash", cmd: deny + " b"},
		spec{event: PreToolUse, matcher: "", cmd: allow + " c"},
	)
	got := r.For(Subject{Caller: tool.Caller{Cwd: dir}}).PreToolUse(t.Context(), call(dir, "Bash", `{"command": "make"}`))
	if diff := cmp.Diff(engine.HookVerdict{Deny: true, Reason: "tests must pass first"}, got); diff != "" {
		t.Errorf("verdict (-want +got):\n%s", diff)
	}
	entries, _ := os.ReadDir(meet)
	if len(entries) != 3 {
		t.Errorf("%d hooks met, want 3", len(entries))
	}
	var labels []string
	for _, rec := range recs.all() {
		labels = append(labels, rec.Decision)
	}
	if diff := cmp.Diff([]string{"allow", "deny", "allow"}, labels); diff != "" {
		t.Errorf("records in configuration order (-want +got):\n%s", diff)
	}
}

func TestFailedHookDropsAllow(t *testing.T) {
	dir := t.TempDir()
	allow := script(t, dir, "allow.sh", `echo '{"decision": "approve"}'`)
	broken := script(t, dir, "broken.sh", `echo "jq: not found" >&2; exit 127`)
	r := newRunner(t, Config{}, spec{event: PreToolUse, cmd: allow}, spec{event: PreToolUse, cmd: broken})
	s := r.For(Subject{Caller: tool.Caller{Cwd: dir}})
	o := s.Fire(t.Context(), toolInput(PreToolUse, call(dir, "Bash", `{"command": "ls"}`)))
	if o.Decision != NoDecision || o.Block || len(o.Errors) != 1 {
		t.Fatalf("outcome = %+v; want no decision, no block, one error", o)
	}
	if !strings.Contains(o.Messages[0], "could not start its program (status 127: not found): jq: not found; check that it exists") ||
		!strings.Contains(o.Messages[0], "settings.json:") {
		t.Errorf("message %q", o.Messages[0])
	}
	if v := s.PreToolUse(t.Context(), call(dir, "Bash", `{"command": "ls"}`)); v.Allow || v.Deny {
		t.Errorf("verdict %+v; want no opinion (the gate decides)", v)
	}
}

func TestUpdatedInputs(t *testing.T) {
	dir := t.TempDir()
	rewrite := func(name, input string) string {
		return script(t, dir, name, `echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": `+input+`}}'`)
	}
	a := rewrite("a.sh", `{"command": "ls -la", "timeout": 5}`)
	same := rewrite("same.sh", `{"timeout": 5, "command": "ls -la"}`)
	other := rewrite("other.sh", `{"command": "ls"}`)

	r := newRunner(t, Config{}, spec{event: PreToolUse, cmd: a}, spec{event: PreToolUse, cmd: same})
	v := r.For(Subject{Caller: tool.Caller{Cwd: dir}}).PreToolUse(t.Context(), call(dir, "Bash", `{"command": "ls"}`))
	if v.Deny || !sameJSON(v.Input, json.RawMessage(`{"command": "ls -la", "timeout": 5}`)) {
		t.Errorf("agreeing rewrites: %+v", v)
	}

	r = newRunner(t, Config{}, spec{event: PreToolUse, cmd: a}, spec{event: PreToolUse, cmd: other})
	v = r.For(Subject{Caller: tool.Caller{Cwd: dir}}).PreToolUse(t.Context(), call(dir, "Bash", `{"command": "ls"}`))
	if !v.Deny || v.Input != nil || !strings.Contains(v.Reason, "rewrote the input in different ways") {
		t.Errorf("conflicting rewrites: %+v", v)
	}
}

func TestTimeoutKillsAndReapsTheGroup(t *testing.T) {
	dir := t.TempDir()
	// The hook ignores SIGTERM and leaves a grandchild in its group, so
	// only SIGKILL to the whole group ends them.
	body := `trap '' TERM
sleep 300 &
echo $! > "` + dir + `/child.pid"
echo $$ > "` + dir + `/hook.pid"
wait`
	hang := script(t, dir, "hang.sh", body)
	var recs records
	r := newRunner(t, Config{Observer: recs.add, Grace: 50 * time.Millisecond},
		spec{event: PreToolUse, cmd: hang, timeout: 1})
	o := r.For(Subject{Caller: tool.Caller{Cwd: dir}}).Fire(t.Context(), toolInput(PreToolUse, call(dir, "Bash", `{}`)))
	if o.Block || o.Decision != NoDecision || len(o.Errors) != 1 {
		t.Fatalf("outcome = %+v; want a non-blocking error", o)
	}
	if msg := o.Errors[0].Error(); !strings.Contains(msg, "timed out") || !strings.Contains(msg, `settings.json:`) ||
		!strings.Contains(msg, `raise its "timeout"`) {
		t.Errorf("error %q does not say it timed out, where it is configured and what to do", o.Errors[0])
	}
	for _, f := range []string{"hook.pid", "child.pid"} {
		if pid := readPid(t, filepath.Join(dir, f)); alive(t, pid) {
			t.Errorf("%s: process %d is still running after the timeout", f, pid)
		}
	}
	if rs := recs.all(); len(rs) != 1 || rs[0].ExitCode != -1 || rs[0].Decision != "error" {
		t.Errorf("records = %+v", rs)
	}
}

func TestCancelledAgentDeniesTheCall(t *testing.T) {
	dir := t.TempDir()
	started := filepath.Join(dir, "started")
	hang := script(t, dir, "hang.sh", `touch "`+started+`"; sleep 300`)
	r := newRunner(t, Config{Grace: 50 * time.Millisecond}, spec{event: PreToolUse, cmd: hang})
	s := r.For(Subject{Caller: tool.Caller{Cwd: dir}})

	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	wg.Go(func() {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(started); err == nil {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	})
	v := s.PreToolUse(ctx, call(dir, "Bash", `{}`))
	wg.Wait()
	if !v.Deny || !strings.Contains(v.Reason, "interrupted") {
		t.Errorf("verdict = %+v; want a denial saying it was interrupted", v)
	}
	// Already cancelled: nothing starts, and the call is still denied.
	if v := s.PreToolUse(ctx, call(dir, "Bash", `{}`)); !v.Deny {
		t.Errorf("verdict with a dead context = %+v", v)
	}
}

func TestHookCannotStart(t *testing.T) {
	dir := t.TempDir()
	r := newRunner(t, Config{}, spec{event: PreToolUse, cmd: "true"})
	o := r.For(Subject{}).Fire(t.Context(), toolInput(PreToolUse, call(filepath.Join(dir, "gone"), "Bash", `{}`)))
	if o.Block || len(o.Errors) != 1 || !strings.Contains(o.Errors[0].Error(), "could not run") {
		t.Errorf("outcome = %+v; want a non-blocking 'could not run' error", o)
	}
}

func TestNoHooksNoProcesses(t *testing.T) {
	var s *Scope
	if v := s.PreToolUse(t.Context(), call("/", "Write", `{}`)); v.Deny || v.Allow || v.Input != nil {
		t.Errorf("nil scope verdict %+v", v)
	}
	r := NewRunner(Config{})
	o := r.For(Subject{}).Stop(t.Context(), StopState{Active: false})
	if o.Ran != 0 || o.Block {
		t.Errorf("outcome %+v", o)
	}
}

// TestMissingProgramIsReported: a hook whose program does not exist is a
// non-blocking error that names the settings file and line and says what
// to check; the other hooks of the event still run and decide.
func TestMissingProgramIsReported(t *testing.T) {
	dir := t.TempDir()
	r := newRunner(t, Config{},
		spec{event: PreToolUse, cmd: "no-such-program-cohort-test --check"},
		spec{event: PreToolUse, cmd: script(t, dir, "deny.sh", `cat >/dev/null; echo "not here" >&2; exit 2`)})
	o := r.For(Subject{Caller: tool.Caller{Cwd: dir}}).Fire(t.Context(), toolInput(PreToolUse, call(dir, "Bash", `{"command": "ls"}`)))
	if !o.Block || o.Reason != "not here" || len(o.Errors) != 1 {
		t.Fatalf("outcome = %+v; want the other hook's deny and one error", o)
	}
	msg := o.Errors[0].Error()
	for _, want := range []string{`"no-such-program-cohort-test --check"`, "settings.json:", "status 127: not found", "check that it exists"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
}
