package dream

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cohort-dev/cohort/internal/filelock"
	"github.com/cohort-dev/cohort/internal/ownread"
)

// LockName is the consolidation lock in a memory directory: its mtime is
// when the last consolidation ended (or began, while one runs), its content
// the PID of the process consolidating now (empty when none is).
const LockName = ".consolidate-lock"

// guardName is the kernel lock that makes reading and writing LockName
// one step, so two processes racing for it cannot both win.
const guardName = ".consolidate-lock.guard"

// DefaultStaleAfter is how long a held lock counts before another process
// may take it over even though its PID is alive.
const DefaultStaleAfter = time.Hour

// guardWait bounds the wait for the guard (it is held for a few file
// operations only).
const guardWait = 5 * time.Second

// Lock is a held consolidation lock. Exactly one of Commit and Rollback
// ends it; later calls do nothing. Not safe for concurrent use.
type Lock struct {
	path  string
	pid   int
	prior time.Time // the lock's mtime before it was taken
	fresh bool      // there was no lock file before
	done  bool
}

// lockState is what LastConsolidated and Acquire read from the lock file.
type lockState struct {
	exists bool
	mtime  time.Time
	pid    int
}

func readLock(path string) (lockState, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return lockState{}, nil
	}
	if err != nil {
		return lockState{}, fmt.Errorf("consolidation lock: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return lockState{}, fmt.Errorf("consolidation lock %s is not a regular file; remove it", path)
	}
	st := lockState{exists: true, mtime: fi.ModTime()}
	data, err := ownread.Config(path, 64) // a pid; not a FIFO it became since the Lstat
	if err != nil {
		return lockState{}, fmt.Errorf("consolidation lock: %w", err)
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid > 0 {
		st.pid = pid
	}
	return st, nil
}

// LastConsolidated returns when the memory in dir was last consolidated:
// the lock file's mtime, zero when it has never been.
func LastConsolidated(dir string) (time.Time, error) {
	st, err := readLock(filepath.Join(dir, LockName))
	return st.mtime, err
}

// acquire takes the lock in dir for pid at now, or returns a *Blocked
// (gate "lock") naming the process that holds it. A holder whose PID is
// dead, or whose lock is older than staleAfter, is taken over.
func acquire(ctx context.Context, dir string, pid int, now time.Time, staleAfter time.Duration, alive func(int) bool) (*Lock, error) {
	path := filepath.Join(dir, LockName)
	var l *Lock
	err := guarded(ctx, dir, func() error {
		st, err := readLock(path)
		if err != nil {
			return err
		}
		if st.pid != 0 && alive(st.pid) && now.Sub(st.mtime) < staleAfter {
			return &Blocked{Gate: GateLock, Reason: fmt.Sprintf("process %d has been consolidating since %s", st.pid, st.mtime.Format(time.RFC3339))}
		}
		if err := writeLock(path, strconv.Itoa(pid), now); err != nil {
			return err
		}
		l = &Lock{path: path, pid: pid, prior: st.mtime, fresh: !st.exists}
		return nil
	})
	return l, err
}

// Commit ends a consolidation that succeeded: the lock's mtime becomes at
// (the time gate counts from it) and its PID is cleared.
func (l *Lock) Commit(ctx context.Context, at time.Time) error {
	return l.end(ctx, func() error { return writeLock(l.path, "", at) })
}

// Rollback ends a consolidation that failed or was stopped: the lock's
// mtime goes back to what it was before Acquire (the file goes away if
// there was none), so the next gate check may try again.
func (l *Lock) Rollback(ctx context.Context) error {
	return l.end(ctx, func() error {
		if l.fresh {
			return os.Remove(l.path)
		}
		return writeLock(l.path, "", l.prior)
	})
}

func (l *Lock) end(ctx context.Context, step func() error) error {
	if l == nil || l.done {
		return nil
	}
	l.done = true
	dir := filepath.Dir(l.path)
	return guarded(ctx, dir, func() error {
		st, err := readLock(l.path)
		if err != nil {
			return err
		}
		if st.pid != l.pid {
			// Taken over as stale: the lock is someone else's now.
			return fmt.Errorf("consolidation lock %s was taken over by process %d; leaving it alone", l.path, st.pid)
		}
		return step()
	})
}

// guarded runs fn holding the guard lock of dir.
func guarded(ctx context.Context, dir string, fn func() error) error {
	lk, err := filelock.Lock(ctx, filepath.Join(dir, guardName), filelock.Options{Create: true, Flags: syscall.O_NOFOLLOW, Timeout: guardWait})
	if err != nil {
		return fmt.Errorf("consolidation lock: %w", err)
	}
	defer lk.Unlock()
	return fn()
}

// writeLock replaces the lock's content and sets its mtime.
func writeLock(path, content string, mtime time.Time) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("consolidation lock: %w", err)
	}
	_, werr := f.WriteString(content)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("consolidation lock %s: %w", path, werr)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		return fmt.Errorf("consolidation lock %s: %w", path, err)
	}
	return nil
}
