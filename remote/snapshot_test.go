package remote

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSnapshotCarriesUncommittedChanges: a teammate starts from what the
// lead sees — its edits, new files and deletions not committed yet — and
// the lead's index, refs and files are as they were.
func TestSnapshotCarriesUncommittedChanges(t *testing.T) {
	t.Parallel()
	dir := newRepo(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n", ".gitignore": "secret\n"})
	head := run(t, dir, "rev-parse", "HEAD")
	if got, err := Snapshot(t.Context(), nil, dir); err != nil || got != head {
		t.Fatalf("clean tree: %s, %v; want HEAD %s", got, err, head)
	}
	writeFile(t, filepath.Join(dir, "a.txt"), "a changed\n")
	writeFile(t, filepath.Join(dir, "new/c.txt"), "c\n")
	writeFile(t, filepath.Join(dir, "secret"), "ignored\n")
	if err := os.Remove(filepath.Join(dir, "b.txt")); err != nil {
		t.Fatal(err)
	}
	run(t, dir, "add", "a.txt") // staged or not, it travels
	before := run(t, dir, "status", "--porcelain")
	snap, err := Snapshot(t.Context(), nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	if snap == head {
		t.Fatal("the snapshot of a changed tree is HEAD")
	}
	if got := run(t, dir, "rev-parse", snap+"^"); got != head {
		t.Errorf("the snapshot's parent is %s, want HEAD %s", got, head)
	}
	if got := run(t, dir, "show", snap+":a.txt"); got != "a changed" {
		t.Errorf("a.txt in the snapshot: %q", got)
	}
	if got := run(t, dir, "show", snap+":new/c.txt"); got != "c" {
		t.Errorf("new/c.txt in the snapshot: %q", got)
	}
	if got := run(t, dir, "ls-tree", "--name-only", "-r", snap); got != ".gitignore\na.txt\nnew/c.txt" {
		t.Errorf("files in the snapshot:\n%s\nwant .gitignore, a.txt, new/c.txt (b.txt deleted, secret ignored)", got)
	}
	if after := run(t, dir, "status", "--porcelain"); after != before {
		t.Errorf("the lead's status changed:\n%s\nwas\n%s", after, before)
	}
	if got := run(t, dir, "rev-parse", "HEAD"); got != head {
		t.Errorf("HEAD moved to %s", got)
	}
}
