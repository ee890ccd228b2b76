// Package filelock takes kernel file locks (flock(2), through
// github.com/gofrs/flock) and waits for a held one with a bounded,
// jittered back-off: one implementation for every lock Cohort waits on
// (team files, task lists, mailboxes). A flock dies with the process that
// holds it, so a crash never leaves a stale lock.
package filelock

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/gofrs/flock"
)

// Options say how to lock. The zero value takes an exclusive lock on an
// existing file and waits until ctx ends.
type Options struct {
	// Shared takes a shared (read) lock instead of an exclusive one.
	Shared bool
	// Create creates the lock file when it is missing (never its
	// directory).
	Create bool
	// Flags are extra flags for opening the file (e.g. syscall.O_NOFOLLOW).
	Flags int
	// Timeout bounds the wait (0: until ctx ends).
	Timeout time.Duration
	// FirstDelay and MaxDelay bound the back-off between attempts (default
	// 20 µs doubling up to 2 ms): short at first, since critical sections
	// last well under a millisecond, capped so many waiters stay
	// responsive. Each wait is jittered (half to all of the delay) so
	// contending processes do not retry in lockstep.
	FirstDelay, MaxDelay time.Duration
	// Check, when set, vets a lock just taken (a team file checks that the
	// lock file was not replaced while it waited); false releases the lock
	// and tries again, an error ends the attempt.
	Check func(*flock.Flock) (bool, error)
}

// Lock takes the lock on path, retrying until it is had, ctx ends or the
// timeout passes. A missing file (without Create) or directory is an error
// wrapping fs.ErrNotExist. Each call opens its own descriptor, so two
// goroutines of one process exclude each other just as two processes do.
// Release the lock with Unlock.
func Lock(ctx context.Context, path string, o Options) (*flock.Flock, error) {
	if lk, err := TryLock(path, o); lk != nil || err != nil {
		return lk, err
	}
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	first, most := o.FirstDelay, o.MaxDelay
	if first <= 0 {
		first = 20 * time.Microsecond
	}
	if most < first {
		most = max(first, 2*time.Millisecond)
	}
	timer := time.NewTimer(time.Hour) // reset before every wait
	defer timer.Stop()
	for delay := first; ; delay = min(delay*2, most) {
		timer.Reset(delay/2 + rand.N(delay/2+1))
		select {
		case <-ctx.Done():
			err := context.Cause(ctx)
			if errors.Is(err, context.DeadlineExceeded) {
				return nil, fmt.Errorf("lock %s: %w (another process held it throughout; look for a stopped or hung cohort process)", path, err)
			}
			return nil, fmt.Errorf("lock %s: %w", path, err)
		case <-timer.C:
		}
		if lk, err := TryLock(path, o); lk != nil || err != nil {
			return lk, err
		}
	}
}

// TryLock makes one attempt: nil and no error when someone else holds the
// lock (or Options.Check asked to try again).
func TryLock(path string, o Options) (*flock.Flock, error) {
	flag := os.O_RDONLY | o.Flags
	if o.Create {
		flag |= os.O_CREATE
	}
	lk := flock.New(path, flock.SetFlag(flag), flock.SetPermissions(0o600))
	var ok bool
	var err error
	if o.Shared {
		ok, err = lk.TryRLock()
	} else {
		ok, err = lk.TryLock()
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("lock %s: %w", path, fs.ErrNotExist)
	case err != nil:
		return nil, fmt.Errorf("lock %s: %w", path, err)
	case !ok:
		return nil, nil
	}
	if o.Check != nil {
		good, err := o.Check(lk)
		if !good || err != nil {
			lk.Unlock()
			return nil, err
		}
	}
	return lk, nil
}

// SamePath is an Options.Check for a lock file that others may remove or
// replace while we wait (a lock on an unlinked inode excludes nobody): the
// lock is kept only while the file at path is the one locked. A replaced
// file is tried again; a directory that is gone ends the attempt with
// gone, which must wrap fs.ErrNotExist if callers test for it.
func SamePath(path string, gone error) func(*flock.Flock) (bool, error) {
	return func(lk *flock.Flock) (bool, error) {
		held, herr := lk.Stat()
		cur, cerr := os.Stat(path)
		if herr == nil && cerr == nil && os.SameFile(held, cur) {
			return true, nil
		}
		if errors.Is(cerr, fs.ErrNotExist) {
			if _, derr := os.Stat(filepath.Dir(path)); errors.Is(derr, fs.ErrNotExist) {
				return false, gone
			}
		}
		return false, nil
	}
}

// ErrDirGone reports that the directory of a sidecar lock file does not
// exist (its team or task list was deleted while the caller waited).
var ErrDirGone = errors.New("lock file's directory is gone")

// Sidecar takes a lock on path, a lock file beside the data it guards
// (created if missing, but never its directory), exclusive or shared, with
// the short back-off of critical sections that last well under a
// millisecond; once taken it checks the file is still the one at path. It
// waits until ctx ends or timeout passes; a missing directory is
// ErrDirGone. Release the lock with Unlock.
func Sidecar(ctx context.Context, path string, shared bool, timeout time.Duration) (*flock.Flock, error) {
	lk, err := Lock(ctx, path, Options{Shared: shared, Create: true, Timeout: timeout,
		FirstDelay: 50 * time.Microsecond, MaxDelay: 5 * time.Millisecond, Check: SamePath(path, ErrDirGone)})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrDirGone
	}
	return lk, err
}
