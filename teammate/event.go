package teammate

// Event kinds: what happens in a team, for displays (cohort demo, a TUI).
const (
	EventTeamCreated = "team_created"
	EventTeamDeleted = "team_deleted"
	EventJoined      = "joined"
	EventMessage     = "message" // sent
	// EventDelivered: a message reached its reader (the lead's or a
	// teammate's queue).
	EventDelivered = "delivered"
	EventIdle      = "idle"
	EventShutdown  = "shutdown"
	// EventShutdownRequested: the lead asks the teammates in To (comma-
	// separated) to shut down, for the reason in Text.
	EventShutdownRequested = "shutdown_requested"
	EventDead              = "dead"
	EventPermission        = "permission"
	EventPlan              = "plan"
	// EventRefused: a message was refused and not counted (From sent it;
	// Text says why).
	EventRefused = "refused"
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
