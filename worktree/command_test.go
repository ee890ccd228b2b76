package worktree

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// layout is a fake repository for the command check: a main checkout with
// a worktree inside it, a home directory and a scratch directory outside.
type layout struct {
	main, wt, other, home, tmp string
	guard                      *Guard
}

func newLayout(t testing.TB) layout {
	t.Helper()
	base := canonicalPrefix(t.TempDir())
	l := layout{
		main:  filepath.Join(base, "repo"),
		home:  filepath.Join(base, "home"),
		tmp:   filepath.Join(base, "scratch"),
		other: filepath.Join(base, "repo", ".cohort", "worktrees", "other"),
	}
	l.wt = filepath.Join(l.main, ".cohort", "worktrees", "mine")
	for _, d := range []string{l.main, l.wt, l.other, l.home, l.tmp, filepath.Join(l.main, "src"), filepath.Join(l.wt, "src")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A symlink in the worktree into the main checkout (as for node_modules).
	if err := os.Symlink(filepath.Join(l.main, "src"), filepath.Join(l.wt, "linked")); err != nil {
		t.Fatal(err)
	}
	l.guard = NewGuard(l.wt, l.main, l.home, filepath.Join(l.main, ".git"), l.other)
	return l
}

func (l layout) expand(s string) string {
	return strings.NewReplacer("$MAIN", l.main, "$WT", l.wt, "$OTHER", l.other, "$TMP", l.tmp, "$HOMEDIR", l.home).Replace(s)
}

func TestCheckCommand(t *testing.T) {
	t.Parallel()
	l := newLayout(t)
	allowed := []string{
		`ls -la`,
		`echo hi > notes.txt`,
		`go test ./... 2>&1 | tail -5`,
		`git add -A && git commit -m "change things in $MAIN/src"`,
		`git commit -m "$(cat <<'EOF'` + "\nmessage\nEOF\n)\"",
		`cat $MAIN/src/a.go`,
		`diff $MAIN/src/a.go src/a.go`,
		`grep -rn foo $MAIN`,
		`cd $MAIN && git status && git log --oneline -3`,
		`cd $MAIN && ls src`,
		`cd src && touch new.go`,
		`cp $TMP/x src/x`,
		`mkdir -p $TMP/build && cp bin $TMP/build/`,
		`echo done > /dev/null 2>&1`,
		`sort data > sorted.txt`,
		`rm -rf build/*`,
		`find . -name '*.o' -delete`,
		`sh -c 'cd src && touch y'`,
		`for f in a b; do echo "$f.txt"; done`,
		`x=$(pwd); echo "$x"`,
		`if [ -f go.mod ]; then go build ./...; fi`,
		`make -j4 && ./bin/tool --out=out.json`,
		`cat $MAIN/src/a.go > src/a.go`,
		`tar czf $TMP/out.tgz src`,
		`cd ~ && ls`,
		`echo x >&2`,
		`GIT_DIR=$WT/.git git status`,
		`FOO=bar make`,
	}
	for _, cmd := range allowed {
		cmd := l.expand(cmd)
		if err := l.guard.CheckCommand(cmd, l.wt); err != nil {
			t.Errorf("refused %q: %v", cmd, err)
		}
	}
	refused := []struct{ cmd, why string }{
		{`cd $MAIN && touch x`, "would run in"},
		{`cd $MAIN; echo hi > notes.txt`, "output is redirected to notes.txt"},
		{`echo hi > $MAIN/notes.txt`, "output is redirected to"},
		{`echo hi >> $MAIN/src/a.go`, "output is redirected to"},
		{`cd ../../.. && make`, "would run in"},
		{`touch ../other/x`, "names ../other/x"},
		{`rm -rf $MAIN/src`, "names"},
		{`rm -rf ../../..`, "names"},
		{`rm -rf $MAIN/../`, "contains the main checkout"},
		{`rm -rf /`, "contains the main checkout"},
		{`rm -rf /*`, "contains the main checkout"},
		{`cp x $MAIN/`, "names"},
		{`sed -i s/a/b/ $MAIN/src/a.go`, "names"},
		{`git -C $MAIN commit -am x`, "names"},
		{`git --git-dir=$MAIN/.git commit -am x`, "names"},
		{`GIT_DIR=$MAIN/.git git commit -am x`, "setting GIT_DIR"},
		{`export GIT_WORK_TREE=$MAIN; git add .`, "setting GIT_WORK_TREE"},
		{`cd "$D" && touch x`, "only known at run time"},
		{`cd - && touch x`, "only known at run time"},
		{`rm $FILE`, "only known at run time"},
		{`for f in a b; do touch "$f.txt"; done`, "only known at run time"}, // variables are not followed
		{`echo x > "$OUT"`, "only known at run time"},
		{`$CMD x`, "only known at run time"},
		{`bash -c "cd $MAIN && touch x"`, "would run in"},
		{`sudo bash -o pipefail -c 'touch $MAIN/x'`, "names"},
		{`eval "touch $MAIN/x"`, "names"},
		{`eval "$S"`, "only known at run time"},
		{`sh -c "$S"`, "only known at run time"},
		{`x=$(touch $MAIN/y)`, "names"},
		{`cat <(touch $MAIN/y)`, "names"},
		{"cat <<EOF\n$(touch $MAIN/y)\nEOF", "names"},
		{`f() { touch z; }; cd $MAIN; f`, "would run in"},
		{`for d in a b; do touch x; cd $MAIN; done`, "would run in"},
		{`ls | xargs rm`, ""}, // xargs and rm both appear: fine as long as cwd is ok
		{`touch linked/x`, "names linked/x"},
		{`echo x > linked/y`, "output is redirected"},
		{`(cd $MAIN && npm install)`, "would run in"},
		{`CDPATH=$MAIN cd src && touch x`, "only known at run time"},
		{`echo 'unterminated`, "parser"},
		{`gcc -o$MAIN/bin x.c`, "names"},
		{`touch {1..100000}`, "brace expansion"},
	}
	for _, tc := range refused {
		cmd := l.expand(tc.cmd)
		err := l.guard.CheckCommand(cmd, l.wt)
		if tc.why == "" {
			if err != nil {
				t.Errorf("refused %q: %v", cmd, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("allowed %q", cmd)
			continue
		}
		if !errors.Is(err, ErrOutsideWorktree) || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("%q: error %q does not say %q", cmd, err, tc.why)
		}
	}
}

func TestCheckCommandUnknownDir(t *testing.T) {
	t.Parallel()
	l := newLayout(t)
	if err := l.guard.CheckCommand("ls", ""); err != nil {
		t.Errorf("a read-only command in an unknown directory was refused: %v", err)
	}
	if err := l.guard.CheckCommand("touch x", ""); err == nil {
		t.Error("a write in an unknown directory was allowed")
	}
}

func TestCheckCommandMessage(t *testing.T) {
	t.Parallel()
	l := newLayout(t)
	err := l.guard.CheckCommand(l.expand("cd $MAIN && touch x"), l.wt)
	want := "worktree: write outside the agent's worktree refused: `touch x` would run in " + l.main +
		", inside the main checkout, and it is not a read-only command. This agent is isolated in the worktree " + l.wt +
		", a full checkout of the same repository: run the command there, on the worktree's copies of the files"
	if d := cmp.Diff(want, err.Error()); d != "" {
		t.Errorf("message (-want +got):\n%s", d)
	}
}

func FuzzCheckCommand(f *testing.F) {
	for _, s := range []string{"ls", "cd /x && touch y", "echo $(rm -rf /) > f", "f(){ f; }; f", "{a,b}{c,d}",
		"bash -c 'eval \"cd ..\"'", "for x in *; do cd $x; done", "cat <<E\n$(x)\nE", "a=(1 2) b+=3 cmd"} {
		f.Add(s)
	}
	l := newLayout(f)
	f.Fuzz(func(t *testing.T, cmd string) {
		_ = l.guard.CheckCommand(cmd, l.wt) // must not panic or hang
	})
}

// BenchmarkCheckCommand times the check of a typical agent command line
// (it runs before every Bash call of an isolated agent).
func BenchmarkCheckCommand(b *testing.B) {
	l := newLayout(b)
	cmd := l.expand(`cd src && go test ./... 2>&1 | tail -20 && git add -A && git commit -m "fix: handle empty input" && cp $TMP/x ./out.txt`)
	for b.Loop() {
		if err := l.guard.CheckCommand(cmd, l.wt); err != nil {
			b.Fatal(err)
		}
	}
}
