package ownread

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestReadFileRefusesWhatAFileLeadsTo plants what a hostile repository
// can commit — links out of the root, into /proc, to a denied file, a
// FIFO — and expects each refused with its name, while a plain file and a
// link that stays inside the root are read.
func TestReadFileRefusesWhatAFileLeadsTo(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(t.TempDir(), "outside.md")
	must(t, os.WriteFile(outside, []byte("outside"), 0o644))
	must(t, os.MkdirAll(filepath.Join(root, "secrets"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "secrets", "key"), []byte("secret"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "plain.md"), []byte("plain"), 0o644))
	must(t, os.WriteFile(filepath.Join(root, "docs.md"), []byte("docs"), 0o644))
	must(t, os.Symlink("docs.md", filepath.Join(root, "inside.md")))
	must(t, os.Symlink(outside, filepath.Join(root, "out.md")))
	must(t, os.Symlink("/proc/self/environ", filepath.Join(root, "environ.md")))
	must(t, os.Symlink("secrets/key", filepath.Join(root, "key.md")))
	must(t, syscall.Mkfifo(filepath.Join(root, "fifo.md"), 0o644))
	denied := func(p string) bool { return strings.HasPrefix(p, filepath.Join(root, "secrets")+"/") }

	for name, want := range map[string]string{"plain.md": "plain", "inside.md": "docs"} {
		got, err := ReadFile(root, root, name, 0, denied)
		if err != nil || string(got) != want {
			t.Errorf("%s: got %q, %v; want %q", name, got, err, want)
		}
	}
	for _, name := range []string{"out.md", "environ.md", "key.md", "fifo.md"} {
		got, err := ReadFile(root, root, name, 0, denied)
		var refused *Refused
		if !errors.As(err, &refused) || !strings.Contains(err.Error(), filepath.Join(root, name)) {
			t.Errorf("%s: got %q, %v; want a refusal naming the file", name, got, err)
		}
	}
	if _, err := ReadFile(root, root, "missing.md", 0, denied); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing.md: %v, want fs.ErrNotExist", err)
	}
}

// TestReadFileWithoutRoot follows a user's link anywhere but the kernel's
// file systems and what deny rules cover.
func TestReadFileWithoutRoot(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	must(t, os.WriteFile(filepath.Join(elsewhere, "CLAUDE.md"), []byte("dotfiles"), 0o644))
	must(t, os.Symlink(filepath.Join(elsewhere, "CLAUDE.md"), filepath.Join(dir, "CLAUDE.md")))
	must(t, os.Symlink("/proc/self/environ", filepath.Join(dir, "COHORT.md")))
	must(t, os.Symlink("/dev/zero", filepath.Join(dir, "AGENTS.md")))
	if got, err := ReadFile("", dir, "CLAUDE.md", 0, nil); err != nil || string(got) != "dotfiles" {
		t.Errorf("CLAUDE.md: got %q, %v", got, err)
	}
	denyAll := func(string) bool { return true }
	for _, c := range []struct {
		name   string
		denied func(string) bool
	}{{"COHORT.md", nil}, {"AGENTS.md", nil}, {"CLAUDE.md", denyAll}} {
		got, err := ReadFile("", dir, c.name, 0, c.denied)
		var refused *Refused
		if !errors.As(err, &refused) {
			t.Errorf("%s: got %q, %v; want a refusal", c.name, got, err)
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
