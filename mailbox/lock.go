package mailbox

import (
	"context"
	"errors"
	"io/fs"
	"time"

	"github.com/cohort-dev/cohort/internal/filelock"
	"github.com/gofrs/flock"
)

// errNoLockFile: the lock file does not exist (the agent was never
// registered). Callers translate it to ErrUnknownRecipient.
var errNoLockFile = errors.New("lock file missing")

// lockPath takes an exclusive flock on path, which must already exist
// unless create is set. It retries until ctx ends or timeout passes,
// whichever comes first; appends hold the lock for tens of microseconds, so
// the first retries are short. The returned lock is released with Unlock.
func lockPath(ctx context.Context, path string, create bool, timeout time.Duration) (*flock.Flock, error) {
	lk, err := filelock.Lock(ctx, path, filelock.Options{Create: create, Flags: openFlags, Timeout: timeout})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errNoLockFile
	}
	return lk, err
}

// tryLockExisting takes an exclusive flock on path without waiting; it
// returns nil and no error when someone else holds it.
func tryLockExisting(path string) (*flock.Flock, error) {
	lk, err := filelock.TryLock(path, filelock.Options{Flags: openFlags})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errNoLockFile
	}
	return lk, err
}

// tryLockPath takes an exclusive flock on path (creating it) without
// waiting; held reports whether someone else has it.
func tryLockPath(path string) (lk *flock.Flock, held bool, err error) {
	lk, err = filelock.TryLock(path, filelock.Options{Create: true, Flags: openFlags})
	return lk, lk == nil && err == nil, err
}
