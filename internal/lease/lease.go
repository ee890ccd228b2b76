// Package lease tells live owners from dead ones: a process holds a lease on
// a file (a kernel flock, which dies with the process however it ends, even
// by SIGKILL), and anyone on the same host can ask whether the lease is held.
// One mechanism for every "is its owner still there?" question Cohort asks:
// the lead of a team (teams/{team}/lead.lock), the processes using a
// session's temporary directory (tmp/{session}/.lock), and the process
// keepers that kill Bash children of a dead session.
//
// Decisions:
//
//   - An exclusive lease records its holder (pid, host, session, since) as
//     JSON in the lock file itself, written once after the lock is taken.
//     The record is for people and for a holder's peers (a teammate finds
//     its lead's pid there); liveness is the lock alone, so a record cut
//     short by a crash is reported as unknown, never trusted and never
//     fatal.
//   - Shared leases (several processes of one session) write no record.
//   - Probe takes the lock exclusively without waiting and drops it at once:
//     it succeeds only when nobody holds the lease. An Acquire that meets a
//     Probe's instant therefore retries for Options.Wait before it reports
//     ErrHeld.
//   - A lock taken on a file that was deleted or replaced meanwhile (a
//     directory swept away while we waited) excludes nobody: Acquire checks
//     that the file it locked is still the one at the path and tries again
//     otherwise.
//   - flock(2) is per host: a lease says nothing about a process on another
//     machine sharing the directory over a network file system.
package lease

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/gofrs/flock"

	"github.com/cohort-dev/cohort/internal/filelock"
)

// ErrHeld reports a lease another process (or another Lease of this one)
// holds.
var ErrHeld = errors.New("lease is held")

// Holder is who holds an exclusive lease.
type Holder struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host,omitempty"`
	Session string    `json:"sessionId,omitempty"`
	Since   time.Time `json:"since"`
}

// Self returns a Holder for this process in session.
func Self(session string) Holder {
	host, _ := os.Hostname()
	return Holder{PID: os.Getpid(), Host: host, Session: session, Since: time.Now().UTC()}
}

// Options say how to acquire.
type Options struct {
	// Shared takes a shared lease: any number of holders, no record.
	Shared bool
	// Wait bounds how long Acquire waits for the lock (default 500 ms,
	// which covers another process's Probe; a live holder holds it for
	// good).
	Wait time.Duration
}

// Lease is a held lease. Release may be called more than once.
type Lease struct {
	path string
	lk   *flock.Flock
}

// Acquire takes the lease on path, creating the file (not its directory)
// if needed, and for an exclusive lease writes h into it. It fails with
// ErrHeld when the lease stays held for Options.Wait, and with an error
// wrapping fs.ErrNotExist when the directory does not exist.
func Acquire(ctx context.Context, path string, h Holder, o Options) (*Lease, error) {
	wait := o.Wait
	if wait <= 0 {
		wait = 500 * time.Millisecond
	}
	lk, err := filelock.Lock(ctx, path, filelock.Options{Shared: o.Shared, Create: true, Timeout: wait,
		FirstDelay: 100 * time.Microsecond, MaxDelay: 20 * time.Millisecond, Check: samePath(path)})
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("lease %s: %w", path, fs.ErrNotExist)
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		return nil, fmt.Errorf("lease %s: %w", path, ErrHeld)
	case err != nil:
		return nil, fmt.Errorf("lease %s: %w", path, err)
	}
	return hold(path, lk, h, o)
}

// Try is Acquire without waiting: (nil, nil) when the lease is held.
func Try(path string, h Holder, o Options) (*Lease, error) {
	lk, err := filelock.TryLock(path, filelock.Options{Shared: o.Shared, Create: true, Check: samePath(path)})
	if err != nil || lk == nil {
		return nil, err
	}
	return hold(path, lk, h, o)
}

// hold makes the lease of a lock just taken, recording h for an
// exclusive one.
func hold(path string, lk *flock.Flock, h Holder, o Options) (*Lease, error) {
	l := &Lease{path: path, lk: lk}
	if !o.Shared {
		if err := l.write(h); err != nil {
			l.Release()
			return nil, fmt.Errorf("lease %s: record the holder: %w", path, err)
		}
	}
	return l, nil
}

// samePath keeps a lock only on the file at path; a directory that is gone
// ends the attempt (fs.ErrNotExist).
func samePath(path string) func(*flock.Flock) (bool, error) {
	return filelock.SamePath(path, fmt.Errorf("lease %s: %w", path, fs.ErrNotExist))
}

// write replaces the file's content with h, through the locked descriptor.
func (l *Lease) write(h Holder) error {
	data, err := json.Marshal(h)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(data, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Path returns the lease's file.
func (l *Lease) Path() string { return l.path }

// Release gives the lease up. The file stays (removing it would let a
// waiter lock an unlinked file).
func (l *Lease) Release() {
	if l != nil && l.lk != nil {
		_ = l.lk.Unlock()
	}
}

// State is what Probe found.
type State int

// Probe results.
const (
	// Missing: there is no lease file; nobody ever held it here.
	Missing State = iota
	// Free: the file exists and nobody holds the lease (its holder ended).
	Free
	// Held: a live process holds the lease.
	Held
)

func (s State) String() string {
	switch s {
	case Free:
		return "free"
	case Held:
		return "held"
	}
	return "missing"
}

// Probe reports whether path's lease is held, and the holder it records
// (zero when there is none or it cannot be read: see Record).
func Probe(path string) (State, Holder, error) {
	h, _ := Record(path)
	lk := flock.New(path, flock.SetFlag(os.O_RDONLY))
	ok, err := lk.TryLock()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Missing, Holder{}, nil
	case err != nil:
		return Missing, Holder{}, fmt.Errorf("lease %s: %w", path, err)
	case ok:
		_ = lk.Unlock()
		return Free, h, nil
	}
	return Held, h, nil
}

// Record reads the holder recorded in path. A record that is missing, empty
// or cut short (its writer was killed) is an error naming the file.
func Record(path string) (Holder, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Holder{}, err
	}
	var h Holder
	if err := json.Unmarshal(bytes.TrimSpace(data), &h); err != nil {
		return Holder{}, fmt.Errorf("%s: holder record unreadable (%v); liveness is decided by the lock alone", path, err)
	}
	return h, nil
}
