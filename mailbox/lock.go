package mailbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"time"

	"github.com/gofrs/flock"
)

// Back-off between flock(LOCK_NB) attempts. Appends hold the lock for tens
// of microseconds, so the first retries are short; the cap keeps a waiter
// responsive when many processes contend.
const (
	lockFirstDelay = 20 * time.Microsecond
	lockMaxDelay   = 2 * time.Millisecond
)

// errNoLockFile: the lock file does not exist (the agent was never
// registered). Callers translate it to ErrUnknownRecipient.
var errNoLockFile = errors.New("lock file missing")

// lockPath takes an exclusive flock on path, which must already exist
// unless create is set. It retries until ctx ends or timeout passes,
// whichever comes first. The returned lock is released with Unlock. Each call
// opens its own descriptor, so two goroutines of one process exclude each
// other just as two processes do.
func lockPath(ctx context.Context, path string, create bool, timeout time.Duration) (*flock.Flock, error) {
	flag := os.O_RDONLY | openFlags
	if create {
		flag |= os.O_CREATE
	}
	lk := flock.New(path, flock.SetFlag(flag), flock.SetPermissions(0o600))
	ok, err := lk.TryLock()
	if ok || err != nil {
		return lockResult(lk, err, path)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	timer := time.NewTimer(time.Hour) // reset before every wait
	defer timer.Stop()
	delay := lockFirstDelay
	for {
		// Jitter (half to all of delay) keeps contending processes from
		// retrying in lockstep.
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
		ok, err := lk.TryLock()
		if ok || err != nil {
			return lockResult(lk, err, path)
		}
		delay = min(delay*2, lockMaxDelay)
	}
}

// lockResult maps a TryLock outcome that ended the wait (locked or failed).
func lockResult(lk *flock.Flock, err error, path string) (*flock.Flock, error) {
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, errNoLockFile
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return lk, nil
}

// tryLockExisting takes an exclusive flock on path without waiting; it
// returns nil and no error when someone else holds it.
func tryLockExisting(path string) (*flock.Flock, error) {
	lk := flock.New(path, flock.SetFlag(os.O_RDONLY|openFlags))
	ok, err := lk.TryLock()
	if !ok && err == nil {
		return nil, nil
	}
	return lockResult(lk, err, path)
}

// tryLockPath takes an exclusive flock on path (creating it) without
// waiting; held reports whether someone else has it.
func tryLockPath(path string) (lk *flock.Flock, held bool, err error) {
	lk = flock.New(path, flock.SetFlag(os.O_RDONLY|os.O_CREATE|openFlags), flock.SetPermissions(0o600))
	ok, err := lk.TryLock()
	if err != nil {
		return nil, false, fmt.Errorf("lock %s: %w", path, err)
	}
	if !ok {
		return nil, true, nil
	}
	return lk, false, nil
}

// syncDir fsyncs a directory so that a rename or create in it is durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
