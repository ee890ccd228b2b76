package teammate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/cohort-dev/cohort/team"
)

// TeamState is a team as `cohort teams` shows it: whether a running session
// leads it, and its teammates' last published states.
type TeamState struct {
	Name        string
	Description string
	CreatedAt   time.Time
	Lead        team.LeadInfo
	Members     []MemberStatus // teammates, not the lead
	// Problem is set when the team file cannot be read (a team whose
	// creation was cut short, a file edited by hand): the team is still
	// listed, and can be removed.
	Problem error
}

// MemberStatus is a teammate of a listed team: its entry and status file.
type MemberStatus struct {
	Name   string
	Active bool  // isActive in the team file
	State  State // from its status file; empty when it has none
	PID    int
	// Running: its process still runs on this host and has not stopped.
	Running bool
}

// Orphaned reports a team nobody leads.
func (s TeamState) Orphaned() bool { return s.Lead.State != team.Led }

// Running lists the teammates whose processes still run.
func (s TeamState) Running() []string {
	var out []string
	for _, m := range s.Members {
		if m.Running {
			out = append(out, m.Name)
		}
	}
	return out
}

// Teams lists every team under store with its state, sorted by name. A team
// whose file is unreadable is listed with Problem set, never skipped.
func Teams(store *team.Store) ([]TeamState, error) {
	names, err := store.ListAll()
	if err != nil {
		return nil, err
	}
	out := make([]TeamState, 0, len(names))
	for _, n := range names {
		out = append(out, Inspect(store, n))
	}
	return out, nil
}

// Inspect reads one team's state.
func Inspect(store *team.Store, name string) TeamState {
	st := TeamState{Name: name}
	lead, err := store.LeadStatus(name)
	st.Lead = lead
	if err != nil {
		st.Problem = err
		return st
	}
	t, err := store.Load(name)
	if err != nil {
		st.Problem = err
		return st
	}
	st.Description, st.CreatedAt = t.Config.Description, t.Config.CreatedAt
	host, _ := os.Hostname()
	for _, m := range t.Config.Members {
		if m.AgentID == t.Config.LeadAgentID {
			continue
		}
		ms := MemberStatus{Name: m.Name, Active: m.IsActive}
		if s, ok, _ := statusIn(store, name, m.Name); ok {
			ms.State, ms.PID = s.State, s.PID
			ms.Running = s.State != StateStopped && s.State != StateDead &&
				(s.Host == "" || s.Host == host) && processAlive(s.PID)
		}
		st.Members = append(st.Members, ms)
	}
	return st
}

// liveTeammates lists the teammates of team name whose processes still run.
func (l *Lead) liveTeammates(name string) []string {
	return Inspect(l.cfg.Store, name).Running()
}

// ErrTeamRunning reports a team that cannot be removed: a running session
// leads it, or (without force) teammates of it still run.
var ErrTeamRunning = errors.New("the team is running")

// RemoveTeam deletes an orphaned team (`cohort teams rm`). A team a running
// session leads is refused; so is one whose teammates still run, unless
// force is set (they stop by themselves once they see their lead gone).
func RemoveTeam(ctx context.Context, store *team.Store, name string, force bool) error {
	st := Inspect(store, name)
	if errors.Is(st.Problem, team.ErrNotFound) || errors.Is(st.Problem, team.ErrInvalidName) {
		return st.Problem
	}
	if !st.Orphaned() {
		return fmt.Errorf("team %q: %w: session %s (pid %d) leads it; end that session, or let its lead delete the team", name, ErrTeamRunning, st.Lead.SessionID, st.Lead.PID)
	}
	if running := st.Running(); len(running) > 0 && !force {
		return fmt.Errorf("team %q: %w: its lead is gone but teammates %v still run; they stop by themselves shortly, or remove it with --force", name, ErrTeamRunning, running)
	}
	err := store.DeleteOrphaned(ctx, name)
	if errors.Is(err, team.ErrLed) {
		return fmt.Errorf("%w: %w", ErrTeamRunning, err)
	}
	return err
}

// Prune removes every orphaned team whose teammates have all stopped, and
// returns the names removed. Teams that cannot be removed are skipped; the
// error joins what went wrong.
func Prune(ctx context.Context, store *team.Store) ([]string, error) {
	states, err := Teams(store)
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, st := range states {
		if !st.Orphaned() || len(st.Running()) > 0 {
			continue
		}
		if err := RemoveTeam(ctx, store, st.Name, false); err != nil {
			if !errors.Is(err, ErrTeamRunning) {
				errs = append(errs, err)
			}
			continue
		}
		removed = append(removed, st.Name)
	}
	slices.Sort(removed)
	return removed, errors.Join(errs...)
}
