package worktree

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckCommandShellAnalysis covers what the guard sees through the
// shared shell analysis: scripts in arguments and in trap, names rebound
// by PATH, control escapes, functions and redirections opened before a
// cd.
func TestCheckCommandShellAnalysis(t *testing.T) {
	t.Parallel()
	l := newLayout(t)
	allowed := []string{
		`f() { ls; }; cd $MAIN; f`,
		`cd $MAIN > out.txt`,
		`bash ./scripts/test.sh`, // what a script does is not seen
		`echo "$(cd $MAIN)"`,
		`$'\x74ouch' src/x`,
		`cd $MAIN && LANG=C git log`,
		`while read f; do cat "$f"; done < list.txt`,
	}
	for _, cmd := range allowed {
		cmd := l.expand(cmd)
		if err := l.guard.CheckCommand(cmd, l.wt); err != nil {
			t.Errorf("refused %q: %v", cmd, err)
		}
	}
	refused := []struct{ cmd, why string }{
		{`flock /tmp/l sh -c 'touch $MAIN/x'`, "names"},
		{`ssh host sh -c "cd $MAIN && make"`, "would run in"},
		{`trap 'touch $MAIN/x' EXIT`, "names"},
		{`alias ll='rm -rf $MAIN'`, "names"},
		{`watch -n 5 'touch $MAIN/x'`, "names"},
		{`sudo $CMD`, "only known at run time"},
		{`timeout 5 "$@"`, "only known at run time"},
		{`$'\x74ouch' $MAIN/x`, "names"},
		{`$'rm\c@' -rf "$X"`, "only known at run time"},
		{`export PATH=/tmp/evil:$PATH; cd $MAIN; git status`, "would run in"},
		{`env -C $MAIN make`, "another directory"},
		{`/bin/t?uch $MAIN/x`, "pattern"},
		{`for d in a b; do cd sub; done; make`, "only known at run time"},
		{`read GIT_DIR < f; git commit -am x`, "GIT_DIR is set to a value only known at run time"},
		{`echo x > $MAIN/*.txt`, "output is redirected"},
		{`x` + strings.Repeat(` eval x`, 20), "more than 16 scripts"},
	}
	for _, tc := range refused {
		cmd := l.expand(tc.cmd)
		err := l.guard.CheckCommand(cmd, l.wt)
		if err == nil {
			t.Errorf("allowed %q", cmd)
			continue
		}
		if !errors.Is(err, ErrOutsideWorktree) || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("%q: error %q does not say %q", cmd, err, tc.why)
		}
	}
}
