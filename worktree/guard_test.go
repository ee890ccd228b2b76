package worktree

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cohort-dev/cohort/tool"
)

func TestGuard(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	r.write("node_modules/dep/index.js", "x\n")
	m := r.manager(Config{Symlinks: []string{"node_modules"}})
	wt, err := m.Create(t.Context(), "guarded", Owner{})
	if err != nil {
		t.Fatal(err)
	}
	other, err := m.Create(t.Context(), "other", Owner{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := m.Guard(t.Context(), wt, "")
	if err != nil {
		t.Fatal(err)
	}
	outside := canonical(t.TempDir())
	link := func(name, target string) {
		t.Helper()
		if err := os.Symlink(target, filepath.Join(wt.Path, name)); err != nil {
			t.Fatal(err)
		}
	}
	link("escape", filepath.Join(r.dir, "src"))                // into the main checkout
	link("dangling", filepath.Join(r.dir, "created-by-write")) // a write would create this
	link("relative-escape", "../../../docs")                   // relative, into main
	link("scratch", outside)                                   // out of the repository
	link("loop1", filepath.Join(wt.Path, "loop2"))
	link("loop2", filepath.Join(wt.Path, "loop1"))

	tests := []struct {
		name string
		path string
		ok   bool
	}{
		{"file in the worktree", filepath.Join(wt.Path, "src", "main.go"), true},
		{"new file in new directories", filepath.Join(wt.Path, "a", "b", "c.txt"), true},
		{"the worktree itself", wt.Path, true},
		{"dot-dot staying inside", filepath.Join(wt.Path, "src") + "/../README.md", true},
		{"outside the repository", filepath.Join(outside, "x.txt"), true},
		{"link from the worktree to outside", filepath.Join(wt.Path, "scratch", "x.txt"), true},
		{"main checkout file", filepath.Join(r.dir, "README.md"), false},
		{"main checkout new file", filepath.Join(r.dir, "new.txt"), false},
		{"main checkout root", r.dir, false},
		{"git directory", filepath.Join(r.dir, ".git", "config"), false},
		{"another worktree", filepath.Join(other.Path, "README.md"), false},
		{"symlinked node_modules", filepath.Join(wt.Path, "node_modules", "dep", "index.js"), false},
		{"agent's link into main", filepath.Join(wt.Path, "escape", "main.go"), false},
		{"dangling link into main", filepath.Join(wt.Path, "dangling"), false},
		{"relative link into main", filepath.Join(wt.Path, "relative-escape", "guide.md"), false},
		{"dot-dot escape", wt.Path + "/../../../README.md", false},
		{"dot-dot after a missing directory", wt.Path + "/nope/../../../../README.md", false},
		{"dot-dot after a link is physical", filepath.Join(wt.Path, "escape") + "/../README.md", false},
		{"relative path", "src/main.go", false},
		{"symlink loop", filepath.Join(wt.Path, "loop1", "x"), false},
		// Issue 36: what these name depends on the process opening them.
		{"through a descriptor", "/dev/fd/3/x", false},
		{"up from /dev/fd", "/dev/fd/../../.." + r.dir + "/x", false},
		{"a process's cwd", "/proc/self/cwd/x", false},
		{"a link to a process's cwd", filepath.Join(wt.Path, "proc-link", "x"), false},
	}
	link("proc-link", "/proc/self/cwd")
	for _, tt := range tests {
		err := g.CheckWrite(tt.path)
		if tt.ok && err != nil {
			t.Errorf("%s: CheckWrite(%s) = %v, want allowed", tt.name, tt.path, err)
		}
		if !tt.ok && !errors.Is(err, ErrOutsideWorktree) {
			t.Errorf("%s: CheckWrite(%s) = %v, want refused", tt.name, tt.path, err)
		}
	}

	// Tools reach the guard through their Env.
	env := &tool.Env{Caller: tool.Caller{Cwd: wt.Path}, Guard: g}
	if err := env.CheckWrite(filepath.Join(r.dir, "README.md")); err == nil {
		t.Error("Env.CheckWrite let a write into the main checkout through")
	}
}

// FuzzResolvePath compares resolvePath with filepath.EvalSymlinks on
// existing paths in a small tree of directories and symlinks (relative,
// absolute, chained and dangling ones).
func FuzzResolvePath(f *testing.F) {
	root := canonical(f.TempDir())
	for _, d := range []string{"a/b/c", "x/y"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			f.Fatal(err)
		}
	}
	for link, target := range map[string]string{
		"a/up":      "..",
		"a/b/toX":   filepath.Join(root, "x"),
		"x/y/back":  "../../a/b",
		"chain":     "a/b/toX",
		"dangling":  "nowhere/file",
		"a/b/c/abs": root,
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			f.Fatal(err)
		}
	}
	for _, seed := range []string{"a/b/c", "a/up/x/y", "chain/y/back/c/../..", "x/y/back/toX/y", "a/b/c/abs/a/up/chain", "dangling", "a/../../etc", "./a//b/./c/"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, rel string) {
		p := root + "/" + rel
		got, err := resolvePath(p)
		if err != nil {
			return // loops and the like: CheckWrite refuses them
		}
		want, err := filepath.EvalSymlinks(p)
		if err != nil {
			return // does not exist (yet): no oracle
		}
		if abs, _ := filepath.Abs(want); abs != got {
			t.Fatalf("resolvePath(%q) = %q, EvalSymlinks says %q", p, got, abs)
		}
	})
}
