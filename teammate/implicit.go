package teammate

import (
	"context"

	"github.com/cohort-dev/cohort/crew"
)

// implicitDescription is the implicit team's description in its team file.
const implicitDescription = "the session's team"

// LeadsTeam returns the team this session leads, "" when none
// (crew.TeamLeader).
func (l *Lead) LeadsTeam() string { return l.teamName() }

// ImplicitTeam returns the team this session leads, making the session's
// implicit team when there is none yet (crew.TeamLeader): under Claude Code
// 2.1.332's model a named agent joins it without TeamCreate.
func (l *Lead) ImplicitTeam(ctx context.Context, lead *crew.Agent) (string, error) {
	l.implicit.Lock()
	defer l.implicit.Unlock()
	if name := l.teamName(); name != "" {
		return name, nil
	}
	name := implicitName(l.cfg.SessionID)
	if _, err := l.CreateTeam(ctx, lead, name, implicitDescription); err != nil {
		return "", err
	}
	return name, nil
}

// implicitName is the implicit team's name for a session.
func implicitName(sessionID string) string {
	id := []rune(sessionID)
	if len(id) > 8 {
		id = id[:8]
	}
	if len(id) == 0 {
		return "session"
	}
	return "session-" + string(id)
}
