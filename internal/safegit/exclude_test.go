package safegit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExclude: missing patterns are appended once under their comment,
// present ones are left alone, and a symlinked exclude file is refused.
func TestExclude(t *testing.T) {
	common := t.TempDir()
	if err := Exclude(common, "Cohort", "/.cohort/worktrees/", "/.cohort/settings.local.json"); err != nil {
		t.Fatal(err)
	}
	if err := Exclude(common, "Cohort", "/.cohort/worktrees/", "/.cohort/x.lock"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(common, "info", "exclude"))
	if err != nil {
		t.Fatal(err)
	}
	want := "# Cohort\n/.cohort/worktrees/\n/.cohort/settings.local.json\n# Cohort\n/.cohort/x.lock\n"
	if string(data) != want {
		t.Fatalf("info/exclude =\n%s\nwant\n%s", data, want)
	}
	// A link in place of the file: Cohort does not write through it.
	other := t.TempDir()
	target := filepath.Join(other, "target")
	if err := os.WriteFile(target, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	linked := t.TempDir()
	if err := os.MkdirAll(filepath.Join(linked, "info"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(linked, "info", "exclude")); err != nil {
		t.Fatal(err)
	}
	if err := Exclude(linked, "Cohort", "/x"); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("Exclude through a link = %v, want a refusal", err)
	}
	if data, _ := os.ReadFile(target); len(data) != 0 {
		t.Fatalf("the link's target was written: %q", data)
	}
}
