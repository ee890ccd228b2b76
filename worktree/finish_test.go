package worktree

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFinishKeepsChangedWorktree(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	m := r.manager(Config{})
	tests := []struct {
		name   string
		change func(t *testing.T, dir string) Changes // returns what Finish must report
	}{
		{"commit", func(t *testing.T, dir string) Changes {
			writeFile(t, filepath.Join(dir, "src", "extra.go"), "package main\n")
			r.gitIn(dir, "add", ".")
			r.gitIn(dir, "commit", "--quiet", "-m", "add extra")
			return Changes{NewCommits: []string{r.gitIn(dir, "rev-parse", "HEAD") + " add extra"}}
		}},
		{"modified", func(t *testing.T, dir string) Changes {
			writeFile(t, filepath.Join(dir, "README.md"), "# changed\n")
			return Changes{Modified: []string{"README.md"}}
		}},
		{"staged new file", func(t *testing.T, dir string) Changes {
			writeFile(t, filepath.Join(dir, "new.txt"), "new\n")
			r.gitIn(dir, "add", "new.txt")
			return Changes{Modified: []string{"new.txt"}}
		}},
		{"deleted", func(t *testing.T, dir string) Changes {
			if err := os.Remove(filepath.Join(dir, "docs", "guide.md")); err != nil {
				t.Fatal(err)
			}
			return Changes{Modified: []string{"docs/guide.md"}}
		}},
		{"untracked file", func(t *testing.T, dir string) Changes {
			writeFile(t, filepath.Join(dir, "notes.txt"), "notes\n")
			return Changes{Untracked: []string{"notes.txt"}}
		}},
		{"untracked directory", func(t *testing.T, dir string) Changes {
			writeFile(t, filepath.Join(dir, "scratch", "a.txt"), "a\n")
			writeFile(t, filepath.Join(dir, "scratch", "b.txt"), "b\n")
			return Changes{Untracked: []string{"scratch/"}}
		}},
		{"commit then uncommitted and untracked", func(t *testing.T, dir string) Changes {
			writeFile(t, filepath.Join(dir, "docs", "guide.md"), "better guide\n")
			r.gitIn(dir, "commit", "--quiet", "-am", "improve guide")
			head := r.gitIn(dir, "rev-parse", "HEAD")
			writeFile(t, filepath.Join(dir, "src", "main.go"), "package main // edited\n")
			writeFile(t, filepath.Join(dir, "todo.txt"), "todo\n")
			return Changes{Modified: []string{"src/main.go"}, Untracked: []string{"todo.txt"}, NewCommits: []string{head + " improve guide"}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			wt, err := m.Create(t.Context(), "change/"+sanitizeField(tt.name), Owner{AgentID: "a"})
			if err != nil {
				t.Fatal(err)
			}
			want := tt.change(t, wt.Path)
			tip := r.git("rev-parse", "refs/heads/"+wt.Branch)
			out, err := m.Finish(t.Context(), wt)
			if err != nil {
				t.Fatal(err)
			}
			if !out.Kept || out.Path != wt.Path || out.Branch != wt.Branch {
				t.Errorf("Finish = %+v, want kept at %s on %s", out, wt.Path, wt.Branch)
			}
			if diff := cmp.Diff(want, out.Changes); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			if !exists(filepath.Join(wt.Path, "README.md")) {
				t.Errorf("kept worktree %s lost its files", wt.Path)
			}
			if got := r.git("rev-parse", "refs/heads/"+wt.Branch); got != tip {
				t.Errorf("branch %s at %s, want %s (with the agent's commits)", wt.Branch, got, tip)
			}
			if _, locked, _ := readLock(wt.admin); locked {
				t.Error("kept worktree is still locked")
			}
			if !exists(filepath.Join(wt.admin, keptFile)) {
				t.Error("kept worktree is not marked kept")
			}
		})
	}
}

func TestFinishRemovesWorktreeWithOnlyIgnoredFiles(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	m := r.manager(Config{})
	wt, err := m.Create(t.Context(), "nested/slug-1.2_3", Owner{})
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(wt.Path, "build", "out.bin"), "artifact")
	ch, err := m.Changes(t.Context(), wt)
	if err != nil || !ch.Empty() {
		t.Fatalf("Changes = %+v, %v; ignored files are no change", ch, err)
	}
	out, err := m.Finish(t.Context(), wt)
	if err != nil || out.Kept {
		t.Fatalf("Finish = %+v, %v; want removed", out, err)
	}
	if exists(wt.Path) || exists(filepath.Dir(wt.Path)) {
		t.Errorf("%s or its parent directory is left behind", wt.Path)
	}
	assertNothingLeft(t, r)
}

func TestSymlinkedDirectories(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	r.write("node_modules/left-pad/index.js", "module.exports = 1\n") // ignored in main
	m := r.manager(Config{Symlinks: []string{"node_modules", "src", "vendor/absent"}})
	wt, err := m.Create(t.Context(), "linked", Owner{})
	if err != nil {
		t.Fatal(err)
	}
	target, err := os.Readlink(filepath.Join(wt.Path, "node_modules"))
	if err != nil || target != filepath.Join(r.dir, "node_modules") {
		t.Errorf("node_modules link = %q, %v; want a link to the main checkout's", target, err)
	}
	if fi, err := os.Lstat(filepath.Join(wt.Path, "src")); err != nil || !fi.IsDir() {
		t.Errorf("src is tracked and must stay a real directory: %v, %v", fi, err)
	}
	if exists(filepath.Join(wt.Path, "vendor")) {
		t.Error("a link was made for a directory the main checkout lacks")
	}
	// The link is untracked and not matched by "node_modules/" (a symlink
	// is not a directory to git), yet it is no change.
	ch, err := m.Changes(t.Context(), wt)
	if err != nil || !ch.Empty() {
		t.Fatalf("Changes = %+v, %v; Cohort's own links are no change", ch, err)
	}
	out, err := m.Finish(t.Context(), wt)
	if err != nil || out.Kept {
		t.Fatalf("Finish = %+v, %v; want removed", out, err)
	}
	if !exists(filepath.Join(r.dir, "node_modules", "left-pad", "index.js")) {
		t.Error("removing the worktree deleted the main checkout's node_modules")
	}
	assertNothingLeft(t, r)
}

func TestSparseCheckout(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	m := r.manager(Config{Sparse: []string{"src"}})
	wt, err := m.Create(t.Context(), "sparse", Owner{})
	if err != nil {
		t.Fatal(err)
	}
	for file, want := range map[string]bool{"src/main.go": true, "README.md": true, "docs/guide.md": false} {
		if got := exists(filepath.Join(wt.Path, file)); got != want {
			t.Errorf("%s checked out = %v, want %v", file, got, want)
		}
	}
	if ch, err := m.Changes(t.Context(), wt); err != nil || !ch.Empty() {
		t.Errorf("Changes = %+v, %v; files outside the cone are no change", ch, err)
	}
	if !exists(filepath.Join(r.dir, "docs", "guide.md")) || r.git("status", "--porcelain") != "" {
		t.Error("the main checkout was affected by the worktree's sparse checkout")
	}
	writeFile(t, filepath.Join(wt.Path, "src", "main.go"), "package main // sparse edit\n")
	out, err := m.Finish(t.Context(), wt)
	if err != nil || !out.Kept || !cmp.Equal(out.Changes.Modified, []string{"src/main.go"}) {
		t.Fatalf("Finish = %+v, %v; want kept with src/main.go modified", out, err)
	}
}
