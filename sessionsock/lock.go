package sessionsock

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// lockFile takes the lock that says "a live process owns this session's
// socket": flock(2) on path, which dies with its process. It refuses with
// ErrInUse when another process (or Listener) holds it. The lock file is
// removed on release; a locker that raced with the removal finds its inode
// unlinked and starts over.
func lockFile(path string) (*os.File, error) {
	for range 8 {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return nil, fmt.Errorf("session lock %s: %w", path, err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			if errors.Is(err, unix.EWOULDBLOCK) {
				return nil, fmt.Errorf("%w: another live process holds %s", ErrInUse, path)
			}
			return nil, fmt.Errorf("session lock %s: %w", path, err)
		}
		if sameFile(f, path) {
			return f, nil
		}
		f.Close() // removed or replaced meanwhile: lock the current one
	}
	return nil, fmt.Errorf("session lock %s keeps being replaced", path)
}

// sameFile reports whether the open file f is still the file at path.
func sameFile(f *os.File, path string) bool {
	a, err1 := f.Stat()
	b, err2 := os.Lstat(path)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

// unlock removes the lock file and releases the lock, in that order, so
// that nobody can take a lock on a file that is about to disappear.
func unlock(f *os.File) error {
	err := os.Remove(f.Name())
	if errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	return errors.Join(err, f.Close())
}

// Hold takes the lock a live session holds on its socket, for a process
// that must not work on the session while it runs (cohort rewind). It
// refuses with ErrInUse while the session's process lives; release gives
// the lock back.
func Hold(dir, id string) (release func() error, err error) {
	path, err := Path(dir, id)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	f, err := lockFile(path + ".lock")
	if err != nil {
		return nil, err
	}
	return func() error { return unlock(f) }, nil
}
