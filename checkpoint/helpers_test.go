package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/cohort-dev/cohort/internal/gitrepo"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// git runs git in dir for a test's set-up, as a user would.
func git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "gc.auto=0", "-c", "maintenance.auto=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir, "GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@x",
		"GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@x")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func write(t testing.TB, root, rel, data string, mode fs.FileMode) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// newRepo makes a repository with a commit: tracked, executable, linked,
// ignored and untracked files, and a staged change.
func newRepo(t testing.TB) (string, gitrepo.Layout) {
	t.Helper()
	dir := t.TempDir()
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	git(t, dir, "init", "-q", "-b", "main")
	write(t, dir, "a.txt", "alpha\n", 0o644)
	write(t, dir, "sub/b.txt", "beta\n", 0o644)
	write(t, dir, "run.sh", "#!/bin/sh\necho hi\n", 0o755)
	write(t, dir, ".gitignore", "*.log\n", 0o644)
	if err := os.Symlink("a.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "first")
	write(t, dir, "notes/untracked.md", "draft\n", 0o644)
	write(t, dir, "build.log", "ignored\n", 0o644)
	write(t, dir, "a.txt", "alpha staged\n", 0o644)
	git(t, dir, "add", "a.txt")
	l, err := gitrepo.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	return dir, l
}

func newStore(t testing.TB) *Store {
	t.Helper()
	s, err := Open(t.Context(), Config{Dir: filepath.Join(t.TempDir(), "checkpoints"), MaxFileSize: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// dump is every file under dir but .git: type, permission bits and a hash
// of the contents (a link's target), one line each.
func dump(t testing.TB, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() && (d.Name() == ".git" || rel == ".cohort") {
			return filepath.SkipDir
		}
		if rel == "." {
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		var body string
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			body, _ = os.Readlink(p)
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			body = hex.EncodeToString(sum[:8])
		}
		lines = append(lines, fmt.Sprintf("%s %s %s", rel, fi.Mode(), body))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// gitState is what a rewind must leave alone in the user's repository:
// refs, index, stash, HEAD.
func gitState(t testing.TB, dir string) string {
	t.Helper()
	index, err := os.ReadFile(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(index)
	refs := git(t, dir, "for-each-ref")
	head, _ := os.ReadFile(filepath.Join(dir, ".git", "HEAD"))
	stash, _ := os.ReadFile(filepath.Join(dir, ".git", "logs", "refs", "stash"))
	return fmt.Sprintf("index %x\nHEAD %s\nrefs:\n%s\nstash:\n%s", sum[:8], head, refs, stash)
}

func snap(t testing.TB, s *Store, turn int, phase Phase, roots ...Root) *Checkpoint {
	t.Helper()
	cp, err := s.Snapshot(context.Background(), "sess-1", "proj", Record{Turn: turn, Phase: phase}, roots)
	if err != nil {
		t.Fatal(err)
	}
	return cp
}

// rewindTurn1 plans and carries out the rewind of session sess-1 to
// before its turn 1.
func rewindTurn1(t testing.TB, s *Store) {
	t.Helper()
	p, err := s.Plan(t.Context(), Request{Session: "sess-1", Project: "proj", Turn: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(t.Context(), p, Options{}); err != nil {
		t.Fatal(err)
	}
}
