package gitrepo

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func repo(t *testing.T) string {
	t.Helper()
	root, _ := filepath.EvalSymlinks(t.TempDir())
	top := filepath.Join(root, "p")
	if err := os.MkdirAll(filepath.Join(top, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	git(t, top, "init", "-q", "-b", "main")
	git(t, top, "commit", "-q", "--allow-empty", "-m", "x")
	return top
}

func TestLayouts(t *testing.T) {
	top := repo(t)
	l, err := Find(filepath.Join(top, "sub"))
	if err != nil || l.WorkTree != top || l.GitDir != filepath.Join(top, ".git") || l.CommonDir != l.GitDir || l.Linked || len(l.Problems) > 0 {
		t.Fatalf("main worktree: %+v %v", l, err)
	}
	wt := filepath.Join(top, ".cohort", "worktrees", "a")
	git(t, top, "worktree", "add", "-q", "-b", "a", wt)
	l, err = Read(wt)
	if err != nil || !l.Linked || l.GitDir != filepath.Join(top, ".git", "worktrees", "a") || l.CommonDir != filepath.Join(top, ".git") || len(l.Problems) > 0 {
		t.Fatalf("linked worktree: %+v %v", l, err)
	}
	if env := strings.Join(l.Env(), " "); !strings.Contains(env, "GIT_COMMON_DIR="+filepath.Join(top, ".git")) || !strings.Contains(env, "GIT_WORK_TREE="+wt) {
		t.Errorf("Env: %s", env)
	}
	if _, err := Find(filepath.Dir(filepath.Dir(top))); !errors.Is(err, ErrNotRepository) && err != nil {
		t.Errorf("outside: %v", err)
	}
}

// Bad input: every odd layout is reported with its file and what to do,
// and nothing a file inside the project says sends git to another
// repository's config.
func TestOddLayoutsAreReported(t *testing.T) {
	t.Run("commondir in .git", func(t *testing.T) {
		top := repo(t)
		evil := t.TempDir()
		os.WriteFile(filepath.Join(top, ".git", "commondir"), []byte(evil+"\n"), 0o644)
		l, err := Read(top)
		if err != nil || l.CommonDir != filepath.Join(top, ".git") || !strings.Contains(strings.Join(l.Problems, "\n"), filepath.Join(top, ".git", "commondir")+" exists") {
			t.Errorf("%+v %v", l, err)
		}
	})
	t.Run(".git file to a fake git dir", func(t *testing.T) {
		top := repo(t)
		other := filepath.Join(filepath.Dir(top), "q")
		os.MkdirAll(other, 0o755)
		fake := filepath.Join(top, "fake")
		os.MkdirAll(fake, 0o755)
		os.WriteFile(filepath.Join(fake, "commondir"), []byte(filepath.Join(top, ".git")), 0o644)
		os.WriteFile(filepath.Join(other, ".git"), []byte("gitdir: "+fake+"\n"), 0o644)
		l, err := Read(other)
		if err != nil || l.CommonDir != fake || !strings.Contains(strings.Join(l.Problems, "\n"), "git worktree repair") {
			t.Errorf("%+v %v", l, err)
		}
	})
	t.Run(".git file to a git dir outside", func(t *testing.T) {
		top := repo(t)
		other := filepath.Join(filepath.Dir(top), "s")
		os.MkdirAll(other, 0o755)
		os.WriteFile(filepath.Join(other, ".git"), []byte("gitdir: "+filepath.Join(top, ".git")+"\n"), 0o644)
		l, err := Read(other)
		if err != nil || l.GitDir != filepath.Join(top, ".git") || !strings.Contains(strings.Join(l.Problems, "\n"), "outside the project") {
			t.Errorf("%+v %v", l, err)
		}
	})
	t.Run(".git symlink", func(t *testing.T) {
		top := repo(t)
		other := filepath.Join(filepath.Dir(top), "r")
		os.MkdirAll(other, 0o755)
		os.Symlink(filepath.Join(top, ".git"), filepath.Join(other, ".git"))
		l, err := Read(other)
		if err != nil || !l.Symlink || l.GitDir != filepath.Join(top, ".git") || !strings.Contains(strings.Join(l.Problems, "\n"), "is a symlink") {
			t.Errorf("%+v %v", l, err)
		}
	})
	for name, content := range map[string]string{"not a git file": "hello\n", "missing git dir": "gitdir: /no/such/dir\n"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, ".git"), []byte(content), 0o644)
			if _, err := Read(dir); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, ".git")) {
				t.Errorf("error %v should name the file", err)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		if _, err := Read(t.TempDir()); !errors.Is(err, ErrNotRepository) {
			t.Errorf("%v", err)
		}
	})
}

// Checkouts names every other working tree git worktree list names, from
// the main checkout and from a linked one, and none of a bare repository.
func TestCheckouts(t *testing.T) {
	top := repo(t)
	out := filepath.Join(filepath.Dir(top), "elsewhere")
	in := filepath.Join(top, ".cohort", "worktrees", "a")
	git(t, top, "worktree", "add", "-q", "-b", "o", out)
	git(t, top, "worktree", "add", "-q", "-b", "a", in)
	l, err := Read(top)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(l.Checkouts(), " "); got != out+" "+in && got != in+" "+out {
		t.Errorf("from the main checkout: %q, want %s and %s", got, out, in)
	}
	l, err = Read(in)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(l.Checkouts(), " "); !strings.Contains(got, top) || !strings.Contains(got, out) || strings.Contains(got, in) {
		t.Errorf("from a linked worktree: %q, want %s and %s, not %s", got, top, out, in)
	}
	git(t, top, "worktree", "remove", "--force", out)
	if l, _ := Read(top); len(l.Checkouts()) != 1 {
		t.Errorf("after worktree remove: %q", l.Checkouts())
	}
	bare := filepath.Join(filepath.Dir(top), "b.git")
	git(t, filepath.Dir(top), "clone", "-q", "--bare", top, bare)
	if got := (Layout{CommonDir: bare}).Checkouts(); len(got) != 0 {
		t.Errorf("bare: %q", got)
	}
}

// A stale worktree entry, whose .git file is gone, names no checkout.
func TestCheckoutsSkipStale(t *testing.T) {
	top := repo(t)
	out := filepath.Join(filepath.Dir(top), "gone")
	git(t, top, "worktree", "add", "-q", "-b", "g", out)
	if err := os.Remove(filepath.Join(out, ".git")); err != nil {
		t.Fatal(err)
	}
	l, _ := Read(top)
	if got := l.Checkouts(); len(got) != 0 {
		t.Errorf("a stale entry: %q", got)
	}
}

// Alternates reads objects/info/alternates: absolute and relative entries,
// comments and blank lines skipped.
func TestAlternates(t *testing.T) {
	top := repo(t)
	l, _ := Read(top)
	if got := l.Alternates(); len(got) != 0 {
		t.Errorf("none: %q", got)
	}
	objects := filepath.Join(top, ".git", "objects")
	os.WriteFile(filepath.Join(objects, "info", "alternates"), []byte("# c\n/abs/objects\n\n../../other/objects\n"), 0o644)
	want := []string{"/abs/objects", filepath.Join(top, "other", "objects")}
	if got := l.Alternates(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Alternates = %q, want %q", got, want)
	}
}
