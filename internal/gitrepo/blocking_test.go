package gitrepo

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cohort-dev/cohort/internal/fifotest"
)

// Blocking names the FIFO among the files git opens to look at a
// repository, and leaves alone a HEAD link (git only reads the link) and
// regular files.
func TestBlockingNamesAFIFOGitWouldOpen(t *testing.T) {
	gd := t.TempDir()
	for _, d := range []string{"objects", "refs"} {
		if err := os.Mkdir(filepath.Join(gd, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	l := Layout{GitDir: gd, CommonDir: gd}
	if err := os.Symlink("refs/heads/main", filepath.Join(gd, "HEAD")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(gd, "config"), []byte("[core]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b := l.Blocking(); b != "" {
		t.Errorf("a HEAD link and a regular config: Blocking = %q; want none", b)
	}
	for _, name := range []string{"commondir", "config", "HEAD"} {
		p := filepath.Join(gd, name)
		fifotest.Make(t, p)
		if b := l.Blocking(); b != p {
			t.Errorf("%s a FIFO: Blocking = %q; want it named", name, b)
		}
		os.Remove(p)
	}
}
