package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

func gitT(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// heldStore, the sandbox's own guard of git's store: the common git dir
// is hidden once the store holds a denied file's contents as they are now
// (committed, packed, staged, written by a tool), and not otherwise; an
// older version alone is the consumer's search's to find (the limit the
// doc states); a whole other checkout hidden does not count.
func TestHeldStore(t *testing.T) {
	for _, c := range []struct {
		name  string
		shape func(t *testing.T, top string)
		held  bool
	}{
		{"committed", func(t *testing.T, top string) {
			gitT(t, top, "add", "-f", "secrets")
			gitT(t, top, "commit", "-q", "-m", "s")
		}, true},
		{"packed", func(t *testing.T, top string) {
			gitT(t, top, "add", "-f", "secrets")
			gitT(t, top, "commit", "-q", "-m", "s")
			gitT(t, top, "gc", "-q", "--prune=now")
		}, true},
		{"staged then unstaged", func(t *testing.T, top string) {
			gitT(t, top, "add", "-f", "secrets")
			gitT(t, top, "reset", "-q", "--", "secrets")
		}, true},
		{"hash-object", func(t *testing.T, top string) { gitT(t, top, "hash-object", "-w", "secrets/key") }, true},
		{"never in git", func(t *testing.T, top string) {}, false},
		{"an older version only", func(t *testing.T, top string) {
			gitT(t, top, "add", "-f", "secrets")
			gitT(t, top, "commit", "-q", "-m", "s")
			writeFile(t, filepath.Join(top, "secrets", "key"), "rotated\n")
		}, false},
		{"an index that does not parse", func(t *testing.T, top string) {
			writeFile(t, filepath.Join(top, ".git", "objects", "pack", "pack-bad.idx"), "\xfftOc\x00\x00\x00\x07")
		}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, _ := filepath.EvalSymlinks(t.TempDir())
			top := filepath.Join(root, "p")
			writeFile(t, filepath.Join(top, "README"), "hi\n")
			writeFile(t, filepath.Join(top, "secrets", "key"), "s3cret\n")
			gitT(t, top, "init", "-q")
			gitT(t, top, "add", "README")
			gitT(t, top, "commit", "-q", "-m", "start")
			c.shape(t, top)
			got := heldStore(top, []string{filepath.Join(top, "secrets")})
			if want := []string{filepath.Join(top, ".git")}; c.held && !slices.Equal(got, want) || !c.held && got != nil {
				t.Errorf("heldStore = %q, want held %v", got, c.held)
			}
			// Already hidden (the consumer's search found it): nothing more.
			if got := heldStore(top, []string{filepath.Join(top, "secrets"), filepath.Join(top, ".git")}); len(got) != 0 {
				t.Errorf("with the store hidden already: %q", got)
			}
		})
	}
	t.Run("another checkout hidden whole", func(t *testing.T) {
		root, _ := filepath.EvalSymlinks(t.TempDir())
		top := filepath.Join(root, "p")
		writeFile(t, filepath.Join(top, "README"), "hi\n")
		gitT(t, top, "init", "-q")
		gitT(t, top, "add", "README")
		gitT(t, top, "commit", "-q", "-m", "start")
		gitT(t, top, "worktree", "add", "-q", filepath.Join(root, "wt2"))
		if got := heldStore(top, []string{filepath.Join(root, "wt2")}); got != nil {
			t.Errorf("a whole checkout hidden counted as denied contents: %q", got)
		}
	})
}
