package teammate

import (
	"context"
	"errors"
	"fmt"

	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/team"
	"github.com/cohort-dev/cohort/tool"
)

// Tools returns the team tools of the session's lead side: SendMessage,
// ListAgents, TeamCreate and TeamDelete, in that order (the last two not
// with an implicit team); make them in the runtime's tool factory
// (crew.Config.Tools), which hands them rt.
func (l *Lead) Tools(rt *crew.Crew) []tool.Tool {
	ts := []tool.Tool{newSendTool(l, rt), newListTool(l, rt)}
	if l.cfg.ImplicitTeam {
		return ts
	}
	return append(ts,
		tool.New(tool.Spec[createInput]{Name: "TeamCreate", Description: createDescription, Input: createSchema,
			Run: func(ctx context.Context, env *tool.Env, in createInput) (tool.Result, error) {
				return l.create(ctx, rt, env, in)
			}}),
		tool.New(tool.Spec[deleteInput]{Name: "TeamDelete", Description: deleteDescription, Input: deleteSchema, Run: l.delete}),
	)
}

const createDescription = `Creates a team that you lead. Teammates you then spawn (Agent with team_name and name) work in parallel with their own contexts, share a task list (TaskCreate, TaskList, TaskUpdate) and talk with you and each other through SendMessage.

Use a team for work that needs several agents to coordinate over time; for one-off parallel work, background agents are simpler. You lead one team at a time. team_name: letters, digits, '-' and '_'.`

const deleteDescription = `Deletes a team you lead: its file, mailboxes and task list. Active teammates are asked to shut down first; without force, the deletion is refused while any of them keeps running.`

// createInput is TeamCreate{team_name, description?}.
type createInput struct {
	TeamName    string `json:"team_name"`
	Description string `json:"description"`
}

var createSchema = tool.Object(
	tool.Required("team_name", tool.String("Name of the team to create.").WithMinLength(1)),
	tool.Optional("description", tool.String("What the team is for.")),
)

// deleteInput is TeamDelete{team_name, force?}.
type deleteInput struct {
	TeamName string `json:"team_name"`
	Force    bool   `json:"force"`
}

var deleteSchema = tool.Object(
	tool.Required("team_name", tool.String("Name of the team to delete.").WithMinLength(1)),
	tool.Optional("force", tool.Boolean("Stop teammates that do not shut down when asked.")),
)

func (l *Lead) create(ctx context.Context, rt *crew.Crew, env *tool.Env, in createInput) (tool.Result, error) {
	lead, ok := rt.Lookup(env.Caller.ID)
	if !l.isLead(env) || !ok {
		return tool.Errorf("Only the session's lead agent can create a team."), nil
	}
	tm, err := l.CreateTeam(ctx, lead, in.TeamName, in.Description)
	switch {
	case errors.Is(err, team.ErrInvalidName):
		return tool.Errorf("Invalid team name %q: use letters, digits, '-' and '_' (at most 64, starting with a letter or digit).", in.TeamName), nil
	case errors.Is(err, team.ErrLed):
		return tool.Errorf("A team named %q exists and another running session leads it (%v). Choose another name.", in.TeamName, err), nil
	case err != nil:
		return tool.Errorf("Could not create team %q: %v", in.TeamName, err), nil
	}
	text := fmt.Sprintf("Team %s created; you are its lead (%s). Spawn teammates with Agent{team_name: %q, name: \"…\", prompt: \"…\"}, plan the work in the shared task list, and coordinate with SendMessage.",
		in.TeamName, tm.Config.LeadAgentID, in.TeamName)
	switch l.claimed() {
	case team.ClaimAdopted:
		text = fmt.Sprintf("Team %s taken over: this session led it before it ended, and you lead it again (%s). Its task list and mailboxes are as they were; teammates that ran then are gone: spawn them again with Agent{team_name: %q, …} if their work must go on.",
			in.TeamName, tm.Config.LeadAgentID, in.TeamName)
	case team.ClaimReplaced:
		text += " (An orphaned team of that name, left by a session that ended, was replaced.)"
	}
	return tool.Text(text), nil
}

// claimed says how the current team came to be led.
func (l *Lead) claimed() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.claim
}

func (l *Lead) delete(ctx context.Context, env *tool.Env, in deleteInput) (tool.Result, error) {
	if !l.isLead(env) {
		return tool.Errorf("Only the session's lead agent can delete a team."), nil
	}
	if l.teamName() != in.TeamName {
		return l.deleteOrphaned(ctx, in)
	}
	l.Shutdown(ctx, "the team is being deleted")
	if active := l.activeTeammates(); len(active) > 0 && !in.Force {
		return tool.Errorf("Teammates %v are still running; ask them to finish or call TeamDelete with force: true.", active), nil
	}
	l.leave()
	if err := l.cfg.Store.Delete(ctx, in.TeamName); err != nil {
		return tool.Errorf("Could not delete team %q: %v", in.TeamName, err), nil
	}
	l.emit(Event{Kind: EventTeamDeleted, Team: in.TeamName})
	return tool.Text(fmt.Sprintf("Team %s deleted.", in.TeamName)), nil
}

// deleteOrphaned deletes a team no running session leads (its lead's
// session ended); a team another running session leads is refused.
func (l *Lead) deleteOrphaned(ctx context.Context, in deleteInput) (tool.Result, error) {
	if alive := l.liveTeammates(in.TeamName); len(alive) > 0 && !in.Force {
		return tool.Errorf("Team %q has no running lead, but its teammates %v still run; call TeamDelete with force: true to delete it anyway (they stop when they notice).", in.TeamName, alive), nil
	}
	err := l.cfg.Store.DeleteOrphaned(ctx, in.TeamName)
	switch {
	case errors.Is(err, team.ErrNotFound), errors.Is(err, team.ErrInvalidName):
		return tool.Errorf("There is no team %q.", in.TeamName), nil
	case errors.Is(err, team.ErrLed):
		return tool.Errorf("You can only delete the team you lead (%q) or one whose lead's session has ended; %v.", l.teamName(), err), nil
	case err != nil:
		return tool.Errorf("Could not delete team %q: %v", in.TeamName, err), nil
	}
	l.emit(Event{Kind: EventTeamDeleted, Team: in.TeamName})
	return tool.Text(fmt.Sprintf("Team %s deleted (its lead's session had ended).", in.TeamName)), nil
}

// activeTeammates lists members other than the lead still marked active.
func (l *Lead) activeTeammates() []string {
	name := l.teamName()
	if name == "" {
		return nil
	}
	ms, err := l.cfg.Store.ActiveMembers(name)
	if err != nil {
		return nil
	}
	var out []string
	for _, m := range ms {
		if m.Name != team.LeadName {
			out = append(out, m.Name)
		}
	}
	return out
}
