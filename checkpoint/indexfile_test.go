package checkpoint

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestIndexReadAsGitDoes: Cohort's reading of an index (versions 2 and 4)
// tells the files the index holds that changed (content, a removal) from
// those that did not, and hands git the paths it does not hold (a new
// file, an ignored one), as `git ls-files -m -o` would list them.
func TestIndexReadAsGitDoes(t *testing.T) {
	t.Parallel()
	for _, version := range []string{"2", "4"} {
		t.Run("v"+version, func(t *testing.T) {
			t.Parallel()
			dir, _ := newRepo(t)
			old := time.Now().Add(-time.Hour)
			for _, f := range []string{"a.txt", "sub/b.txt", "run.sh"} {
				if err := os.Chtimes(filepath.Join(dir, f), old, old); err != nil {
					t.Fatal(err)
				}
			}
			git(t, dir, "update-index", "--index-version", version)
			git(t, dir, "update-index", "--refresh") // the stat data of now, older than the index
			index := filepath.Join(dir, ".git", "index")
			write(t, dir, "sub/b.txt", "beta, edited\n", 0o644)
			if err := os.Remove(filepath.Join(dir, "link")); err != nil {
				t.Fatal(err)
			}
			write(t, dir, "new.txt", "new\n", 0o644)
			paths := []string{"a.txt", "sub/b.txt", "link", "new.txt", "build.log", "run.sh"}
			changed, others, ok := changedTracked(dir, index, 20, paths)
			if !ok {
				t.Fatalf("the version %s index was not read", version)
			}
			if diff := cmp.Diff([]string{"sub/b.txt", "link"}, changed); diff != "" {
				t.Errorf("changed files the index holds (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"new.txt", "build.log"}, others); diff != "" {
				t.Errorf("paths for git (-want +got):\n%s", diff)
			}
			// git agrees on the files the index holds.
			got := git(t, dir, "ls-files", "-z", "-m", "--", "a.txt", "sub/b.txt", "link", "run.sh")
			for _, p := range []string{"sub/b.txt", "link"} {
				if !slices.Contains(strings.Split(got, "\x00"), p) {
					t.Errorf("git ls-files -m does not list %s: %q", p, got)
				}
			}
		})
	}
}

// TestIndexNotReadIsLeftToGit: an index Cohort does not read in full (a
// split index, a truncated file) is left to git.
func TestIndexNotReadIsLeftToGit(t *testing.T) {
	t.Parallel()
	dir, _ := newRepo(t)
	index := filepath.Join(dir, ".git", "index")
	data, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(t.TempDir(), "index")
	if err := os.WriteFile(short, data[:len(data)/2], 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := changedTracked(dir, short, 20, []string{"a.txt"}); ok {
		t.Error("a truncated index was read")
	}
	git(t, dir, "update-index", "--split-index")
	if _, _, ok := changedTracked(dir, index, 20, []string{"a.txt"}); ok {
		t.Error("a split index was read")
	}
}
