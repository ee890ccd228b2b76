package teammate

import (
	"slices"
	"time"

	"github.com/cohort-dev/cohort/team"
)

// ProcessMember is a teammate this lead started in a process of its own,
// with what it last published: its usage and cost reach the lead only
// this way.
type ProcessMember struct {
	team.Member
	Team  string
	State State
	Spend Spend
	// Started is when the lead spawned it; Ended when it stopped or was
	// found dead (zero while it runs).
	Started, Ended time.Time
}

// ProcessMembers returns every teammate this lead started in a process of
// its own during the session, running or gone, in spawn order: read fresh
// from its status file while there is one, else as last read (a deleted
// team's files are gone, what its teammates spent is not).
func (l *Lead) ProcessMembers() []ProcessMember {
	l.mu.Lock()
	hs := append([]*handle(nil), l.retired...)
	for _, h := range l.members {
		if h.process != "" {
			hs = append(hs, h)
		}
	}
	l.mu.Unlock()
	out := make([]ProcessMember, 0, len(hs))
	for _, h := range hs {
		l.mu.Lock()
		pm := h.seen
		l.mu.Unlock()
		// A status older than the spawn is an earlier teammate's of the
		// same name.
		if st, ok, _ := statusIn(l.cfg.Store, pm.Team, h.name); ok && !st.Heartbeat.Before(pm.Started.Add(-time.Second)) {
			pm.State, pm.Spend = st.State, st.Spend
			if (st.State == StateStopped || st.State == StateDead) && pm.Ended.IsZero() {
				pm.Ended = st.Heartbeat
			}
			l.mu.Lock()
			h.seen = pm
			l.mu.Unlock()
		}
		out = append(out, pm)
	}
	slices.SortStableFunc(out, func(a, b ProcessMember) int { return a.Started.Compare(b.Started) })
	return out
}
