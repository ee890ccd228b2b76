package teammate

import (
	"context"
	"errors"
	"fmt"
	"os"
	ossignal "os/signal"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/cohort-dev/cohort/internal/lease"
	"github.com/cohort-dev/cohort/team"
	"github.com/cohort-dev/cohort/tmux"
)

// ErrLeadGone ends a teammate whose lead is gone: its process ended, or
// another session took the team over, or the team was deleted.
var ErrLeadGone = errors.New("the team's lead is gone")

// DefaultLeadGoneGrace is how long a teammate whose lead is gone lets its
// current turn run on before it cancels it.
const DefaultLeadGoneGrace = 2 * time.Second

// Liveness defaults: a member publishes its heartbeat every
// DefaultHeartbeat, and one whose heartbeat is older than DefaultDeadAfter
// counts as dead (a teammate is reported to its lead and its tasks
// released; a lead stops its teammates on other machines). A vanished
// machine is known within about their sum, inside issue 42's 30 s.
const (
	DefaultHeartbeat = time.Second
	DefaultDeadAfter = 10 * time.Second
)

// leadWatch is a teammate's view of its lead: closed gone once the lead is
// seen gone, with the reason.
type leadWatch struct {
	once   sync.Once
	gone   chan struct{}
	reason string
}

func newLeadWatch() *leadWatch { return &leadWatch{gone: make(chan struct{})} }

func (w *leadWatch) set(reason string) {
	w.once.Do(func() { w.reason = reason; close(w.gone) })
}

func (w *leadWatch) isGone() bool {
	select {
	case <-w.gone:
		return true
	default:
		return false
	}
}

// leadGone checks, once, whether the lead of teamDir is gone for a member
// of session (its lead's session id; "" accepts any lead). A team without a
// lead lock (made by an older Cohort) has a lead we cannot see: it counts
// as there.
func leadGone(teamDir, session string) (string, bool) {
	st, h, err := lease.Probe(filepath.Join(teamDir, team.LeadLock))
	switch {
	case err != nil:
		return "", false
	case st == lease.Held && session != "" && h.Session != "" && h.Session != session:
		return fmt.Sprintf("session %s took the team over", h.Session), true
	case st == lease.Held:
		return "", false
	case st == lease.Free:
		if h.PID > 0 {
			return fmt.Sprintf("the lead's process (pid %d) ended", h.PID), true
		}
		return "the lead's process ended", true
	}
	if _, err := os.Stat(filepath.Join(teamDir, team.ConfigFile)); errors.Is(err, os.ErrNotExist) {
		return "the team was deleted", true
	}
	return "", false
}

// leadCheck returns the check watchLead makes every heartbeat: the lead
// lock for a team on files; for a team on NATS, whose lead may be on
// another machine, the lead's status on the team's board — stopped, or no
// heartbeat for LeadDeadAfter by this machine's clock. No status at all
// ages as a beat that stopped when this check was made (the teammate
// started watching): a lead whose machine died and whose key was purged
// then leaves a fresh worker nothing else to see.
func (tm *Loop) leadCheck() (func() (string, bool), error) {
	t, err := tm.cfg.Store.Load(tm.cfg.Team)
	if err != nil {
		return nil, err
	}
	if t.Config.NATS == "" {
		return func() (string, bool) { return leadGone(t.Dir, tm.cfg.Member.SessionID) }, nil
	}
	b, err := tm.cfg.Store.Statuses(tm.cfg.Team)
	if err != nil {
		return nil, err
	}
	since := tm.cfg.Now()
	return func() (string, bool) {
		st, ok, err := readStatus(b, team.LeadName)
		switch {
		case err != nil:
			return "", false
		case !ok:
			if age := tm.cfg.Now().Sub(since); age > tm.cfg.LeadDeadAfter {
				return fmt.Sprintf("no status from the lead in the %s since this teammate started watching", age.Round(time.Second)), true
			}
			return "", false
		case st.State == StateStopped || st.State == StateDead:
			return "the lead stopped", true
		}
		if age := tm.cfg.Now().Sub(st.Heartbeat); age > tm.cfg.LeadDeadAfter {
			return fmt.Sprintf("no heartbeat from the lead for %s", age.Round(time.Second)), true
		}
		return "", false
	}, nil
}

// watchLead checks the lead every heartbeat until ctx ends; once it is
// gone it records so and, after the grace period, cancels the teammate's
// turn with ErrLeadGone. Only a teammate in its own process watches: an
// in-process one lives and dies with its lead.
func (tm *Loop) watchLead(ctx context.Context, cancelTurn context.CancelCauseFunc) {
	gone, err := tm.leadCheck()
	if err != nil {
		return
	}
	t := time.NewTicker(tm.cfg.Heartbeat)
	defer t.Stop()
	for {
		if reason, gone := gone(); gone {
			tm.cfg.Logf("teammate %s: %s: %s; finishing the turn, then exiting", tm.name, ErrLeadGone, reason)
			tm.lead.set(reason)
			break
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
	grace := time.NewTimer(tm.cfg.LeadGoneGrace)
	defer grace.Stop()
	select {
	case <-ctx.Done():
	case <-grace.C:
		cancelTurn(fmt.Errorf("%w (%s)", ErrLeadGone, tm.lead.reason))
	}
}

// orphaned records a teammate whose lead is gone: stopped, with the reason,
// and inactive in the team file. It returns the error Run ends with.
func (tm *Loop) orphaned() error {
	tm.status.stop("lead gone: " + tm.lead.reason)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := tm.cfg.Store.SetActive(ctx, tm.cfg.Team, tm.name, false); err != nil {
		tm.cfg.Logf("teammate %s: mark inactive: %v", tm.name, err)
	}
	return fmt.Errorf("teammate %s: %w (%s)", tm.name, ErrLeadGone, tm.lead.reason)
}

// leaveTmux takes the lead's private tmux server down when this teammate,
// whose lead is gone, is the last of its team still running in it: nothing
// else would (the lead that started it is dead). The user's own tmux is
// never touched: a server counts as private only when its socket lies in
// Config.PrivateTmuxDir. Every teammate records its state before it looks
// at the others', so of several leaving at once at least one sees all the
// others stopped.
func (tm *Loop) leaveTmux() {
	socket := tmux.SocketOf(tm.cfg.Getenv("TMUX"))
	if socket == "" || tm.cfg.PrivateTmuxDir == "" || filepath.Dir(socket) != filepath.Clean(tm.cfg.PrivateTmuxDir) {
		return
	}
	others := slices.DeleteFunc(Inspect(tm.cfg.Store, tm.cfg.Team).Running(), func(n string) bool { return n == tm.name })
	if len(others) > 0 {
		return
	}
	// Killing the server hangs up our own pane: we are done, and leave in
	// our own time.
	ossignal.Ignore(syscall.SIGHUP)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tmux.KillServer(ctx, socket); err != nil {
		tm.cfg.Logf("teammate %s: %v", tm.name, err)
	}
}
