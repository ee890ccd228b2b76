package hook

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/internal/proc"
)

// FuzzSettingsHooks feeds arbitrary settings documents to the parser: it
// must never panic, every problem names the file, and every command it
// keeps is runnable.
func FuzzSettingsHooks(f *testing.F) {
	for _, seed := range []string{
		`{"hooks": {"PreToolUse": [{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "x", "timeout": 3}]}]}}`,
		`{"hooks": {"Stop": [{"hooks": [{"command": "y"}, 7, {"type": "prompt"}]}], "Nope": 1}}`,
		`{"hooks": {"PreToolUse": [{"matcher": "(", "hooks": [{"type": "command", "command": "z", "timeout": 1e300}]}]}}`,
		`{"hooks": []}`, `{"hooks": null}`, `{"hooks": {"PreToolUse": {}}}`, `{"hooks": {"\u00e9": [[]]}}`,
		"{\n\"hooks\": {\"Stop\": [{\"matcher\": \"\u00e9\u00e9\", \"hooks\": [{\"type\": \"command\"}]}]}}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		set, probs := loadSet("/p/settings.json", data)
		for _, p := range probs {
			if p.Path != "/p/settings.json" || p.Msg == "" {
				t.Fatalf("problem without file or message: %+v", p)
			}
		}
		for _, ev := range Events {
			for _, c := range set.Commands(ev) {
				if c.Event != ev || strings.TrimSpace(c.Cmd) == "" || c.Timeout < 0 || c.Timeout > MaxTimeout || c.Line < 1 || c.Col < 1 {
					t.Fatalf("bad command kept: %+v", c)
				}
			}
		}
	})
}

// FuzzAnswer feeds arbitrary hook output to the interpreter: it must never
// panic, and a PreToolUse answer that looks like JSON but is not valid can
// never come out as anything but a denial.
func FuzzAnswer(f *testing.F) {
	for _, seed := range []struct {
		stdout, stderr string
		code           int
	}{
		{`{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"a": 1}}}`, "", 0},
		{`{"decision": "block", "reason": "r"}`, "", 0},
		{`{"continue": false, "stopReason": "s", "systemMessage": "m"}`, "", 0},
		{`{"decision": 3}`, "", 0},
		{`{"hookSpecificOutput": {"hookEventName": "Stop", "permissionDecision": "deny"}}`, "", 0},
		{`{"hookSpecificOutput": {"updatedInput": [1]}}`, "", 0},
		{`{`, "", 0},
		{"plain", "why", 2},
		{"", "boom", 1},
	} {
		for ev := range Events {
			f.Add(seed.stdout, seed.stderr, seed.code, ev)
		}
	}
	f.Fuzz(func(t *testing.T, stdout, stderr string, code, evIndex int) {
		ev := Events[uint(evIndex)%uint(len(Events))]
		c := &Command{Event: ev, Cmd: "h"}
		v := interpret(ev, ran{cmd: c, stdout: stdout, stderr: stderr, exit: proc.Exit{Code: code}})
		_ = v.label()
		o := combine(ev, []verdict{v})
		if ev == PermissionRequest {
			if o.Decision == Allow && len(o.Errors) > 0 {
				t.Fatalf("a failed PermissionRequest hook allowed: %+v", o)
			}
			if o.UpdatedInput != nil && (o.Decision != Allow || !json.Valid(o.UpdatedInput)) {
				t.Fatalf("PermissionRequest rewrote the input without a valid allow: %+v", o)
			}
			return
		}
		if ev != PreToolUse {
			if o.Decision != NoDecision || o.UpdatedInput != nil {
				t.Fatalf("%s produced a permission decision: %+v", ev, o)
			}
			return
		}
		if o.Block && (o.Decision != Deny || o.Reason == "" || o.UpdatedInput != nil) {
			t.Fatalf("block without deny, reason, or with an input: %+v", o)
		}
		text := bytes.TrimSpace([]byte(stdout))
		if code == 0 && len(text) > 0 && text[0] == '{' && !json.Valid(text) && !o.Block {
			t.Fatalf("unreadable JSON %q did not deny: %+v", stdout, o)
		}
		if code == 2 && !o.Block {
			t.Fatalf("exit 2 did not deny: %+v", o)
		}
		if o.UpdatedInput != nil && !json.Valid(o.UpdatedInput) {
			t.Fatalf("invalid updated input %q", o.UpdatedInput)
		}
	})
}
