package teammate

// Event kinds: what happens in a team, for displays (cohort demo, a TUI).
const (
	EventTeamCreated = "team_created"
	EventTeamDeleted = "team_deleted"
	EventJoined      = "joined"
	EventMessage     = "message"
	EventIdle        = "idle"
	EventShutdown    = "shutdown"
	EventDead        = "dead"
	EventPermission  = "permission"
	EventPlan        = "plan"
)

// Event is one thing that happened in a team.
type Event struct {
	Kind   string
	Team   string
	From   string
	To     string
	Text   string
	Detail string
}
