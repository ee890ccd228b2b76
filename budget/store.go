package budget

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/cohort-dev/cohort/internal/filelock"
)

// lockWait bounds a wait for the ledger's lock: the processes of a session
// hold it for well under a millisecond at a time.
const lockWait = 30 * time.Second

// Keys of the shared accounts in the file.
const (
	sessionKey = "session"
	teamPrefix = "team:"
	// teamCapsKey holds the caps of every team.
	teamCapsKey = "team"
)

// state is the ledger file's content: the shared accounts.
type state struct {
	// Caps by account key: "session", and "team" for every team.
	Caps map[string]Caps `json:"caps,omitempty"`
	// Spent by account key: "session", "team:NAME".
	Spent map[string]Spend `json:"spent,omitempty"`
	Holds []hold           `json:"holds,omitempty"`
}

// hold is a reservation under way, against the shared accounts it names.
type hold struct {
	ID string `json:"id"`
	// PID and Owner name the process that made it (Owner tells a process
	// apart from an earlier one that had its pid).
	PID      int      `json:"pid"`
	Owner    string   `json:"owner"`
	Accounts []string `json:"accounts"`
	Spend
}

// capsFor returns the caps of the shared account key.
func (st *state) capsFor(key string) Caps {
	if c, ok := st.Caps[key]; ok {
		return c
	}
	if strings.HasPrefix(key, teamPrefix) {
		c := st.Caps[teamCapsKey]
		if c.Label != "" {
			c.Label = fmt.Sprintf("team %q's %s", strings.TrimPrefix(key, teamPrefix), c.Label)
		} else {
			c.Label = fmt.Sprintf("team %q's budget", strings.TrimPrefix(key, teamPrefix))
		}
		return c
	}
	return Caps{}
}

// used is what key has spent plus what the holds under way hold for it.
func (st *state) used(key string) Spend {
	u := st.Spent[key]
	for _, h := range st.Holds {
		if slices.Contains(h.Accounts, key) {
			u = u.Add(h.Spend)
		}
	}
	return u
}

// charge adds s to the spend of every key.
func (st *state) charge(keys []string, s Spend) {
	if st.Spent == nil {
		st.Spent = map[string]Spend{}
	}
	for _, k := range keys {
		st.Spent[k] = st.Spent[k].Add(s)
	}
}

// release removes the hold with id, reporting whether it was there.
func (st *state) release(id string) bool {
	n := len(st.Holds)
	st.Holds = slices.DeleteFunc(st.Holds, func(h hold) bool { return h.ID == id })
	return len(st.Holds) != n
}

// dropDead removes the holds of processes that are gone: another pid
// that no longer runs, or this pid under another owner (an earlier process
// that had it).
func (st *state) dropDead(pid int, owner string) bool {
	n := len(st.Holds)
	st.Holds = slices.DeleteFunc(st.Holds, func(h hold) bool {
		if h.PID == pid {
			return h.Owner != owner
		}
		return !alive(h.PID)
	})
	return len(st.Holds) != n
}

// alive reports whether pid runs on this machine.
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// store is the ledger file of a session.
type store struct {
	path  string
	pid   int
	owner string
}

func newStore(path string) (*store, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("budget: %w", err)
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	return &store{path: path, pid: os.Getpid(), owner: hex.EncodeToString(b[:])}, nil
}

// update runs f on the file's state under the lock and writes the state
// back when f changed it (changed) or dead holds were dropped. An error
// from f leaves the file as it was (but for the dead holds).
func (s *store) update(ctx context.Context, f func(st *state) (changed bool, err error)) error {
	lk, err := filelock.Lock(ctx, s.path+".lock", filelock.Options{Create: true, Timeout: lockWait})
	if err != nil {
		return fmt.Errorf("budget: %w", err)
	}
	defer lk.Unlock()
	file, err := os.OpenFile(s.path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return fmt.Errorf("budget: %w", err)
	}
	defer file.Close()
	st, err := s.read(file)
	if err != nil {
		return err
	}
	dropped := st.dropDead(s.pid, s.owner)
	changed, ferr := f(&st)
	if changed || dropped {
		if err := s.write(file, &st); err != nil {
			return err
		}
	}
	return ferr
}

// read reads the state: the file's first JSON value (what follows it is
// the tail of a longer earlier state, see write); an empty file is an
// empty state.
func (s *store) read(f *os.File) (state, error) {
	var st state
	data, err := io.ReadAll(f)
	if err != nil {
		return st, fmt.Errorf("budget: %w", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return st, nil
	}
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&st); err != nil {
		return st, fmt.Errorf("budget: the ledger %s is damaged (%v); it records what this session has spent against its caps: remove it to start the count again", s.path, err)
	}
	return st, nil
}

// write writes the state over the file in place, then cuts the file to
// its length. A process killed between the two leaves the new state
// followed by the end of the old one, which read ignores; the file is
// never replaced, since replacing a file by rename makes ext4 flush it,
// milliseconds a request (see the package doc).
func (s *store) write(f *os.File, st *state) error {
	data, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("budget: %w", err)
	}
	data = append(data, '\n')
	if _, err := f.WriteAt(data, 0); err != nil {
		return fmt.Errorf("budget: %w", err)
	}
	if err := f.Truncate(int64(len(data))); err != nil {
		return fmt.Errorf("budget: %w", err)
	}
	return nil
}
