package crew

import (
	"context"
	"fmt"

	"github.com/cohort-dev/cohort/flags"
	"github.com/cohort-dev/cohort/tool"
)

// The Agent tool under two agent models. The seed's (the default): a call
// waits for its agent unless run_in_background is true, and teammates join
// a team the lead made with TeamCreate (team_name and name). Claude Code
// 2.1.332's, behind the background_agents flag (a call runs in the
// background unless run_in_background is false) and the implicit_team flag
// (the session has one team, made at its first named agent; a name makes
// a teammate; team_name and mode are ignored). Under either, a call written
// for the other works: a name without a team starts a named agent, and a
// team_name that cannot apply is ignored with a note in the result.

// TeamLeader is implemented by a TeammateSpawner that knows the session's
// team (package teammate's Lead).
type TeamLeader interface {
	// LeadsTeam returns the team the session leads, "" when none.
	LeadsTeam() string
	// ImplicitTeam returns the team the session leads, making the
	// session's implicit team when there is none.
	ImplicitTeam(ctx context.Context, lead *Agent) (string, error)
}

// implicitTeam reports whether a name makes a teammate of the session's
// one team: the implicit_team flag, with teams available.
func (t *agentTool) implicitTeam() bool {
	_, ok := t.mates.(TeamLeader)
	return ok && t.rt.Flags().Bool(flags.ImplicitTeam) && t.rt.Flags().Bool(flags.AgentTeams)
}

// modelBullets are the description's lines on waiting and on names.
func (t *agentTool) modelBullets() string {
	wait, names := seedWaitBullet, seedResultBullet
	if t.rt.Flags().Bool(flags.BackgroundAgents) {
		wait = backgroundWaitBullet
	}
	if t.implicitTeam() {
		names = implicitResultBullet
	}
	return wait + names
}

// fieldTexts are the descriptions of the fields whose meaning differs
// between the models.
func (t *agentTool) fieldTexts() (background, name, teamName string, mode tool.Schema) {
	background = "Run the agent in the background and be notified when it finishes."
	if t.rt.Flags().Bool(flags.BackgroundAgents) {
		background = "Defaults to true: the agent runs in the background and you are notified when it finishes. false makes you wait for its result."
	}
	if t.implicitTeam() {
		return background, "Makes the agent a teammate of the session's team, addressable with SendMessage by this name.",
			"Deprecated and ignored: the session has a single implicit team.", tool.String("Deprecated and ignored.")
	}
	return background, "A name that makes the agent addressable with SendMessage while it runs.",
		"With name: spawn the agent as a teammate of this team.",
		tool.Enum("Permission mode for the agent.", "default", "acceptEdits", "plan", "dontAsk", "bypassPermissions")
}

// background reports whether a call's agent runs in the background: as
// run_in_background says, else as the background_agents flag says.
func (t *agentTool) background(in AgentInput) bool {
	if in.RunInBackground != nil {
		return *in.RunInBackground
	}
	return t.rt.Flags().Bool(flags.BackgroundAgents)
}

// normalize reads a call under the session's model. With an implicit team
// it drops team_name and mode and, for the lead's named agent, sets
// team_name to the session's team (made now if need be). Under the seed's
// model a team_name that cannot apply — no name with it, or no team to
// join — is dropped, and note says so for the result.
func (t *agentTool) normalize(ctx context.Context, parent *Agent, in AgentInput) (_ AgentInput, note string, _ error) {
	leader, _ := t.mates.(TeamLeader)
	lead := parent.Info().Depth == 0
	if t.implicitTeam() {
		in.TeamName, in.Mode = "", ""
		if in.Name == "" || !lead {
			return in, "", nil
		}
		name, err := leader.ImplicitTeam(ctx, parent)
		if err != nil {
			return in, "", fmt.Errorf("Could not make the session's team for %q: %v. Leave out the name to start an agent without a team.", in.Name, err)
		}
		in.TeamName = name
		return in, "", nil
	}
	if in.TeamName == "" {
		return in, "", nil
	}
	switch {
	case in.Name == "":
		note = fmt.Sprintf("(team_name %q was ignored: a teammate needs a name as well, so this agent was started without a team.)", in.TeamName)
	case lead && (t.mates == nil || !t.rt.Flags().Bool(flags.AgentTeams) || (leader != nil && leader.LeadsTeam() == "")):
		note = fmt.Sprintf("(team_name %q was ignored: this session leads no team, so %s was started as a named agent without one. TeamCreate makes a team.)", in.TeamName, in.Name)
	default:
		return in, "", nil
	}
	in.TeamName = ""
	return in, note, nil
}
