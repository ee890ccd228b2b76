package permission

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/shellcmd"
)

// TestReadOnlyCommands checks the per-command read-only verdict other
// packages (the worktree guard) build on.
func TestReadOnlyCommands(t *testing.T) {
	tests := []struct {
		line string
		want []bool
	}{
		{"ls; rm x; git log -3", []bool{true, false, true}},
		{"cd $x; ls", []bool{false, true}},
		{"LANG=C ls; FOO=1 ls; env LD_PRELOAD=x ls", []bool{true, false, false}},
		{"bash -c 'ls; eval x'", []bool{true, false}},
		{"timeout 5 cat f; timeout --frob 5 cat f", []bool{true, false}},
		{"ls > out; cat < in", []bool{true, true}}, // redirections are the caller's
		{"xargs cat; xargs echo", []bool{false, true}},
		{"$CMD; ls", []bool{false, true}},
		// Something in the line that changes what names run.
		{"PATH=/evil; ls", []bool{false}},
		{"export LD_PRELOAD=/x.so; ls", []bool{false}},
		{"read PATH < f; ls", []bool{false, false}},
		{"hash -p ./evil git; git status", []bool{false, false}},
		{"x=1; export NODE_ENV=test; ls", []bool{true}},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			got := ReadOnlyCommands(shellcmd.Analyze(tt.line, shellcmd.Options{Dir: "/w"}))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestBashControlEscape: mvdan.cc/sh leaves $'\c@' as written while Bash
// ends the word there, so such a word is only known at run time.
func TestBashControlEscape(t *testing.T) {
	f := newFixture(t)
	expect(t, f.checkerWith(ModeBypassPermissions, nil, denyRm, nil), bash(`$'rm\c@' -rf x`), Ask)
	expect(t, f.checkerWith(ModeBypassPermissions, nil, denyRm, nil), bash(`$'\x72m' -rf x`), Deny)
}

// TestBashDenyWithUnknownDir: a path relative to a directory that cannot
// be told still meets the deny rules through the directories that can.
func TestBashDenyWithUnknownDir(t *testing.T) {
	f := newFixture(t)
	c := f.checkerWith(ModeBypassPermissions, nil, []string{"Read(./secrets/**)"}, nil)
	expect(t, c, bash("cd src; cd $X; cat ../secrets/key"), Deny)
	expect(t, c, bash("CDPATH=/x cd src; cat ../secrets/key"), Deny)
	expect(t, c, bash("cd $X; cat ../secrets/key"), Ask)
}
