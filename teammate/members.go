package teammate

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/team"
)

// MemberState is one member of the team this session leads, as a display
// shows it: the team file's record and the state it last published.
type MemberState struct {
	team.Member
	Team  string
	State State // empty before it has published one
	// InProcess is set for a teammate that runs in this process (its agent
	// is the runtime's too).
	InProcess bool
}

// Members returns the active members of the team this session leads,
// without the lead itself; nil without a team.
func (l *Lead) Members() []MemberState {
	name := l.teamName()
	if name == "" {
		return nil
	}
	members, err := l.cfg.Store.ActiveMembers(name)
	if err != nil {
		return nil
	}
	l.mu.Lock()
	inProc := map[string]bool{}
	for n, h := range l.members {
		inProc[n] = h.inProc != nil
	}
	l.mu.Unlock()
	var out []MemberState
	for _, m := range members {
		if m.Name == team.LeadName {
			continue
		}
		ms := MemberState{Member: m, Team: name, InProcess: inProc[m.Name]}
		if st, ok, _ := statusIn(l.cfg.Store, name, m.Name); ok {
			ms.State = st.State
		}
		out = append(out, ms)
	}
	return out
}

// ErrNoMember reports a name that is no active member of the team this
// session leads.
var ErrNoMember = errors.New("no such teammate")

// Message writes text into member's inbox from the team's lead: the
// session's user speaking to a teammate directly. It reads it at its next
// step, or wakes with it when idle.
func (l *Lead) Message(ctx context.Context, member, text string) error {
	name, mbox := l.teamName(), l.Mailbox()
	if name == "" || mbox == nil {
		return fmt.Errorf("%w %q: this session leads no team", ErrNoMember, member)
	}
	if m, err := l.cfg.Store.Member(name, member); err != nil || !m.IsActive || m.Name == team.LeadName {
		return fmt.Errorf("%w %q in team %s", ErrNoMember, member, name)
	}
	_, err := mbox.Append(ctx, mailbox.Message{From: team.LeadName, To: member, Text: text,
		Summary: "a message from the user"})
	return err
}

// StopMember asks one teammate to shut down, waits up to the shutdown
// timeout, then forces it, and marks it inactive (as Shutdown does for
// all).
func (l *Lead) StopMember(ctx context.Context, member, reason string) error {
	name := l.teamName()
	if name == "" {
		return fmt.Errorf("%w %q: this session leads no team", ErrNoMember, member)
	}
	if m, err := l.cfg.Store.Member(name, member); err != nil || !m.IsActive || m.Name == team.LeadName {
		return fmt.Errorf("%w %q in team %s", ErrNoMember, member, name)
	}
	l.stopOne(ctx, name, member, reason, time.Now().Add(l.cfg.ShutdownTimeout))
	return nil
}
