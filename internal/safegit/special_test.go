//go:build linux

package safegit

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/proc"
	"github.com/cohort-dev/cohort/sandbox"
)

// Cohort's own git opens no FIFO and no device but /dev/null: a ref (or
// packed-refs) linked to a FIFO in a command's private TMPDIR, the one
// place a sandboxed command can make one, or to /dev/zero fails at once
// instead of holding git until its deadline (internal/redteam's
// o13-gitlink-ref-link). It holds with the TMPDIR inside the project too,
// where git still reads every file, those made after its sandbox was set
// up included.
func TestGitOpensNoSpecialFile(t *testing.T) {
	for _, inside := range []bool{false, true} {
		for _, c := range []struct{ name, target string }{
			{"refs/heads/main", "fifo"},
			{"packed-refs", "fifo"},
			{"refs/heads/main", "/dev/zero"},
			{"refs/heads/main", "/dev/urandom"},
		} {
			t.Run(c.name+"-"+filepath.Base(c.target)+map[bool]string{true: "-tmp-in-project"}[inside], func(t *testing.T) {
				top, l := project(t)
				tempRoot := filepath.Dir(top)
				if inside {
					tempRoot = top
				}
				sb, err := sandbox.New(sandbox.Config{Home: filepath.Dir(top), TempRoot: tempRoot})
				if err != nil {
					t.Fatal(err)
				}
				defer sb.Close()
				r := &Runner{Env: append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x"),
					Sandbox: func(ctx context.Context, writable []string) (proc.Launcher, error) { return sb.Helper(ctx, writable) }}
				// The helpers' policies are set up before the file comes.
				if _, err := r.Run(t.Context(), Cmd{Repo: l, Args: []string{"status", "--porcelain"}}); err != nil {
					t.Fatalf("status before: %v", err)
				}
				if _, err := r.Run(t.Context(), Cmd{Repo: l, Args: []string{"add", "a.txt"}, Write: []string{top}}); err != nil {
					t.Fatalf("add before: %v", err)
				}
				if inside {
					os.WriteFile(filepath.Join(top, "later.txt"), []byte("later\n"), 0o644)
					if _, err := r.Run(t.Context(), Cmd{Repo: l, Args: []string{"add", "later.txt"}, Write: []string{top}}); err != nil {
						t.Errorf("git cannot read a file made at the top of a project that holds the TMPDIR: %v", err)
					}
				}
				target := c.target
				if target == "fifo" {
					target = filepath.Join(sb.TempDir(), "fifo")
					if err := syscall.Mkfifo(target, 0o600); err != nil {
						t.Fatal(err)
					}
				}
				if c.name == "packed-refs" {
					git(t, top, "pack-refs", "--all")
				}
				ref := filepath.Join(top, ".git", c.name)
				os.Remove(ref)
				if err := os.Symlink(target, ref); err != nil {
					t.Fatal(err)
				}
				// A guard only: a FIFO fails in milliseconds, /dev/urandom
				// when git's heap reaches its limit (sandbox.Policy.DataLimit),
				// in seconds at the machine's speed of reading it.
				ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
				defer cancel()
				// Read-only, and allowed to write the project (a rewind's).
				for _, write := range [][]string{nil, {top}} {
					start := time.Now()
					_, err = r.Run(ctx, Cmd{Repo: l, Args: []string{"rev-parse", "--verify", "-q", "refs/heads/main"}, Write: write})
					t.Logf("writing %v, after %v: %v", write, time.Since(start), err)
					if err == nil || ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
						t.Errorf("git writing %v on a ref linked to %s: %v (context: %v); want a failure at once", write, c.target, err, ctx.Err())
					}
				}
			})
		}
	}
}
