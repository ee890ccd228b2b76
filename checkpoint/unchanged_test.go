package checkpoint

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/safegit"
)

// countedGit is a store whose git calls are logged, one line each.
func countedGit(t *testing.T) (*Store, func() []string) {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "calls")
	wrapper := filepath.Join(dir, "git")
	script := "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '" + log + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := Open(t.Context(), Config{Dir: filepath.Join(t.TempDir(), "checkpoints"), Git: &safegit.Runner{Git: wrapper}, MaxFileSize: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	calls := func() []string {
		data, _ := os.ReadFile(log)
		os.Remove(log)
		return strings.Fields(strings.ReplaceAll(string(data), " ", "_"))
	}
	return s, calls
}

// TestUnchangedRootRunsNoGit: a checkpoint of a root that is as the last
// one found it runs no git and records the same tree; any change a
// snapshot must see (content, mode, a new file in a folder of ignored
// files, a removal) runs git again. Store.Open runs none either.
func TestUnchangedRootRunsNoGit(t *testing.T) {
	t.Parallel()
	dir, repo := newRepo(t)
	write(t, dir, "logs/x.log", "ignored\n", 0o644)
	write(t, dir, "big.bin", strings.Repeat("x", 4<<10), 0o644)
	write(t, dir, "[ab].txt", "a glob's name\n", 0o644)
	plain := t.TempDir()
	write(t, plain, "p.txt", "plain\n", 0o644)
	s, calls := countedGit(t)
	if got := calls(); len(got) != 0 {
		t.Fatalf("Open ran git: %q", got)
	}
	// Every entry is older than a scan an hour from now: none is racy.
	s.scanNow = func() time.Time { return time.Now().Add(time.Hour) }
	roots := []Root{{Dir: dir, Repo: repo}, {Dir: plain}}
	first := snap(t, s, 1, Before, roots...)
	if len(calls()) == 0 {
		t.Fatal("the first checkpoint ran no git")
	}
	again := snap(t, s, 1, After, roots...)
	if got := calls(); len(got) != 0 {
		t.Errorf("a checkpoint of unchanged roots ran git: %q", got)
	}
	for i := range roots {
		if again.Roots[i].Tree != first.Roots[i].Tree || again.Roots[i].Index != first.Roots[i].Index {
			t.Errorf("root %d: tree %s, index %s; want %s, %s", i, again.Roots[i].Tree, again.Roots[i].Index, first.Roots[i].Tree, first.Roots[i].Index)
		}
	}
	changes := []struct {
		name   string
		change func()
	}{
		{"content", func() { write(t, dir, "sub/b.txt", "beta, longer now\n", 0o644) }},
		{"mode", func() { chmod(t, filepath.Join(dir, "a.txt"), 0o755) }},
		{"new file beside ignored ones", func() { write(t, dir, "logs/new.txt", "seen\n", 0o644) }},
		{"removal", func() { rm(t, filepath.Join(plain, "p.txt")) }},
		{"a name git would read as a pattern", func() { write(t, dir, "[ab].txt", "changed\n", 0o644) }},
	}
	last := again
	for i, c := range changes {
		c.change()
		cp := snap(t, s, 2+i, Before, roots...)
		if len(calls()) == 0 {
			t.Errorf("%s: the checkpoint ran no git", c.name)
		}
		if cp.Roots[0].Tree == last.Roots[0].Tree && cp.Roots[1].Tree == last.Roots[1].Tree {
			t.Errorf("%s: the checkpoint's trees did not change", c.name)
		}
		if len(cp.Roots[0].Large) != 1 || cp.Roots[0].Large[0].Path != "big.bin" {
			t.Errorf("%s: files over the limit %+v, want big.bin", c.name, cp.Roots[0].Large)
		}
		last = cp
	}
}

// TestSameSizeEditWithItsOldMtime: an edit that keeps the file's size and
// puts its mtime back (touch -d) is still seen, by the kernel's clock.
func TestSameSizeEditWithItsOldMtime(t *testing.T) {
	t.Parallel()
	dir, repo := newRepo(t)
	s := newStore(t)
	root := Root{Dir: dir, Repo: repo}
	first := snap(t, s, 1, Before, root)
	path := filepath.Join(dir, "sub", "b.txt")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	write(t, dir, "sub/b.txt", "BETA\n", 0o644) // the same five bytes
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if cp := snap(t, s, 1, After, root); cp.Roots[0].Tree == first.Roots[0].Tree {
		t.Error("the edit was not recorded: the tree is the first checkpoint's")
	}
}

func chmod(t *testing.T, path string, mode os.FileMode) {
	t.Helper()
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

func rm(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}

// TestEmptyFolderTakesOneGit: the first checkpoint of an empty folder that
// is not a repository runs git once (to list it), writes the empty tree
// itself, and a rewind to it removes what was made since.
func TestEmptyFolderTakesOneGit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, calls := countedGit(t)
	cp := snap(t, s, 1, Before, Root{Dir: dir})
	if got := calls(); len(got) != 1 || !strings.Contains(got[0], "ls-files") {
		t.Errorf("git calls %q, want one ls-files", got)
	}
	if cp.Roots[0].Tree != "4b825dc642cb6eb9a060e54bf8d69288fbee4904" {
		t.Errorf("tree %s, want the empty tree", cp.Roots[0].Tree)
	}
	write(t, dir, "made/since.txt", "x\n", 0o644)
	p, err := s.Plan(t.Context(), Request{Session: "sess-1", Turn: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(t.Context(), p, Options{}); err != nil {
		t.Fatal(err)
	}
	if got := dump(t, dir); got != "" {
		t.Errorf("after the rewind the folder holds:\n%s", got)
	}
}

// TestUnseenPathsAreLeftOut: a path a Read deny rule covers (which the
// sandbox shows git as a device) is left out of a snapshot instead of
// failing it.
func TestUnseenPathsAreLeftOut(t *testing.T) {
	t.Parallel()
	dir, repo := newRepo(t)
	s := newStore(t)
	secret := filepath.Join(dir, ".env")
	root := Root{Dir: dir, Repo: repo, Unseen: func(p string) bool { return p == secret }}
	first := snap(t, s, 1, Before, root)
	write(t, dir, ".env", "TOKEN=x\n", 0o644)
	if cp := snap(t, s, 1, After, root); cp.Roots[0].Tree != first.Roots[0].Tree {
		t.Errorf("the unseen .env was recorded: tree %s, want %s", cp.Roots[0].Tree, first.Roots[0].Tree)
	}
	write(t, dir, "seen.txt", "x\n", 0o644)
	if cp := snap(t, s, 2, Before, root); cp.Roots[0].Tree == first.Roots[0].Tree {
		t.Error("a seen file beside it was not recorded")
	}
}
