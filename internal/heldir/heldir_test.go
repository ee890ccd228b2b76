package heldir

import (
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestHeldIsReachedWhateverTheName: once held, the directory is reached
// through its hold after its name became a link outside, and a hold of
// its path while another folder is there is refused.
func TestHeldIsReachedWhateverTheName(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir, outside := filepath.Join(root, "f"), filepath.Join(root, "outside")
	for _, d := range []string{dir, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	d, err := Hold(dir + "/.")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	if d.Path() != dir || Lookup(dir) != d {
		t.Fatalf("held at %q, Lookup %v", d.Path(), Lookup(dir))
	}
	if err := os.Rename(dir, dir+".d"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, dir); err != nil {
		t.Fatal(err)
	}
	r, err := OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.WriteFile("x", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.Close()
	if _, err := os.Stat(filepath.Join(dir+".d", "x")); err != nil {
		t.Errorf("the write through the hold did not reach the held directory: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "x")); err == nil {
		t.Error("the write through the hold followed the name outside")
	}
	// Another folder at the held path is not the one held there.
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if d2, err := Hold(dir); err == nil {
		d2.Release()
		t.Error("a second hold of a path where another folder now is was accepted")
	}
}

// TestHoldRefusesALinkOnTheWay: OpenNoLinks follows no link, so a name
// that became a link between its resolution and its opening fails.
func TestHoldRefusesALinkOnTheWay(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "real"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if f, err := OpenNoLinks(filepath.Join(root, "link")); err == nil {
		f.Close()
		t.Fatal("OpenNoLinks followed a link")
	}
	d, err := Hold(filepath.Join(root, "link"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()
	if d.Path() != filepath.Join(root, "real") {
		t.Errorf("held %s, want the resolved %s", d.Path(), filepath.Join(root, "real"))
	}
}
