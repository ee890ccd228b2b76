package cli

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cohort-dev/cohort"
)

// parseLine parses argv as cohort's command line does (readArgv, then
// cobra's flags) into fresh options.
func parseLine(t *testing.T, argv []string) (*options, []string) {
	t.Helper()
	o := &options{}
	root := newRoot(context.Background(), &Invocation{}, o)
	line, err := readArgv(argv, root)
	if err != nil {
		t.Fatalf("%q: %v", argv, err)
	}
	if err := root.ParseFlags(line.args); err != nil {
		t.Fatalf("%q: %v", line.args, err)
	}
	return o, sessionFlags(root.Flags())
}

// TestSessionFlagsStartTheSameSession: the flags a background session
// records set the same Config when its command line is parsed again
// (respawn), list flags with every value and in order; --bg's own, the
// directory and the conversation's are not among them.
func TestSessionFlagsStartTheSameSession(t *testing.T) {
	argv := []string{"--bg", "-w", "-n", "job", "--cwd", "/src/app", "-r", "c0ffee",
		"--model", "opus", "--permission-mode", "acceptEdits",
		"--allowedTools", "Bash(git diff:*)", "Edit", "--allowed-tools", "Read",
		"--disallowed-tools", "WebFetch", "--add-dir", "/a b", "/c",
		"--settings", `{"env": {"A": "1,2"}}`, "--append-system-prompt", "be brief",
		"--teammate-backend", "a=tmux", "--teammate-backend", "b=in-process",
		"--tools", "Bash,Read", "--max-budget-usd", "1.5", "--agent-timeout", "2m",
		"--sandbox", "off", "--flag", "x=1", "--max-turns", "7", "fix it"}
	first, flags := parseLine(t, argv)
	for _, f := range flags {
		name, _, _ := strings.Cut(strings.TrimPrefix(f, "--"), "=")
		if notCarried[name] {
			t.Errorf("%s is carried over", f)
		}
	}
	if !slices.Contains(flags, "--permission-mode=acceptEdits") || !slices.Contains(flags, "--add-dir=/a b") {
		t.Errorf("flags %q", flags)
	}
	again, flags2 := parseLine(t, flags)
	skip := cmpopts.IgnoreFields(cohort.Config{}, "Dir", "Resume")
	if d := cmp.Diff(first.cfg, again.cfg, skip, cmpopts.IgnoreUnexported(cohort.Config{})); d != "" {
		t.Errorf("the recorded flags %q set another Config (-first +again):\n%s", flags, d)
	}
	if !slices.Equal(flags, flags2) {
		t.Errorf("the flags do not come back the same:\n%q\n%q", flags, flags2)
	}
	if _, none := parseLine(t, []string{"--bg", "fix it"}); len(none) != 0 {
		t.Errorf("a bare --bg records %q", none)
	}
}
