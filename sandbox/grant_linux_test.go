package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// TestGrantHoldsWithTheLinkCheckWrong: a hook's output grant through a
// link the model made is refused even when the first check (linkCheck,
// an lstat walk) is made to pass everything: the folder is opened and the
// file compared as the kernel resolves the literal path, with no link
// followed below the home, the temp dir or Cohort's home (issue 36's
// layering, for attack8's o8-hook-grant). Control: with the check wrong,
// a plain path is still granted, and so is one whose home is itself a
// link (a system link, above the anchor).
func TestGrantHoldsWithTheLinkCheckWrong(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	realHome, project, outside, cohortHome := filepath.Join(root, "realhome"), filepath.Join(root, "project"),
		filepath.Join(root, "outside"), filepath.Join(root, "cohorthome")
	for _, d := range []string{realHome, project, outside, cohortHome, filepath.Join(realHome, "plain")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The home is a link, as /home is on some systems: links at or above
	// it are the system's.
	home := filepath.Join(root, "home")
	if err := os.Symlink(realHome, home); err != nil {
		t.Fatal(err)
	}
	existing := filepath.Join(outside, "existing.txt")
	if err := os.WriteFile(existing, []byte("the user's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, to := range map[string]string{"logs": outside, "clogs": cohortHome, "note.log": existing, "deep": realHome} {
		if err := os.Symlink(to, filepath.Join(realHome, link)); err != nil {
			t.Fatal(err)
		}
	}
	sb, err := New(Config{SessionID: "grantfault", Home: home, CohortHome: cohortHome, TempRoot: root})
	if err != nil {
		t.Skipf("no sandbox on this machine: %v", err)
	}
	t.Cleanup(func() {
		if err := sb.Close(); err != nil {
			t.Errorf("sandbox Close: %v", err)
		}
	})
	linkCheck = func(*Sandbox, string) error { return nil }
	t.Cleanup(func() { linkCheck = (*Sandbox).noLinks })

	for _, p := range []string{
		filepath.Join(home, "logs", "o8.log"),
		filepath.Join(home, "clogs", "o8.log"),
		filepath.Join(home, "note.log"),
		filepath.Join(home, "deep", "plain", "o8.log"),
	} {
		if got, err := sb.Grant(project, p); err == nil {
			t.Errorf("Grant(%s) = %q with the link check wrong; want a refusal", p, got)
		}
	}
	for _, f := range []string{filepath.Join(outside, "o8.log"), filepath.Join(cohortHome, "o8.log"), filepath.Join(realHome, "plain", "o8.log")} {
		if _, err := os.Lstat(f); err == nil {
			t.Errorf("%s was made through the model's link", f)
		}
	}
	if got, _ := os.ReadFile(existing); string(got) != "the user's\n" {
		t.Errorf("the file outside changed: %q", got)
	}

	want := filepath.Join(realHome, "plain", "ok.log")
	got, err := sb.Grant(project, filepath.Join(home, "plain", "ok.log"))
	if err != nil || got != want {
		t.Fatalf("Grant of a plain path under a linked home = %q, %v; want %q", got, err, want)
	}
	if fi, err := os.Lstat(want); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the granted file was not made: %v", err)
	}
}
