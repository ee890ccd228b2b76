package permission

import "testing"

// Decision.ReadOnly is set exactly when an allowed Bash call rests on the
// read-only analysis alone: a rule, a mode that approves the call's writes
// (acceptEdits for a redirect into the project, bypassPermissions for
// anything) or an Edit rule clears it, and the sandbox then gives the
// command its writing profile.
func TestDecisionReadOnly(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		mode     Mode
		allow    []string
		line     string
		readOnly bool
	}{
		{ModeDefault, nil, "ls -la", true},
		{ModeDefault, nil, "cat README.md | wc -l", true},
		{ModeDefault, nil, "git status > /dev/null", true},
		{ModePlan, nil, "git log --oneline", true},
		{ModeDontAsk, nil, "grep -r x .", true},
		{ModeAcceptEdits, nil, "ls", true},
		{ModeAcceptEdits, nil, "echo x > notes.txt", false},
		{ModeDefault, []string{"Edit(./notes.txt)"}, "echo x > notes.txt", false},
		{ModeDefault, []string{"Bash(make:*)"}, "make test", false},
		{ModeDefault, []string{"Bash(make:*)"}, "make test | grep FAIL", false},
		{ModeDefault, []string{"Bash"}, "ls", false},
		{ModeBypassPermissions, nil, "ls", false},
		{ModeBypassPermissions, nil, "rm -rf build", false},
	} {
		d := f.decide(f.checkerWith(tc.mode, tc.allow, nil, nil), bash(tc.line))
		if d.Behavior != Allow {
			t.Errorf("%s %v %q: %s (%s), want allow", tc.mode, tc.allow, tc.line, d.Behavior, d.Reason)
			continue
		}
		if d.ReadOnly != tc.readOnly {
			t.Errorf("%s %v %q: ReadOnly %v, want %v (%s)", tc.mode, tc.allow, tc.line, d.ReadOnly, tc.readOnly, d.Reason)
		}
	}
}
