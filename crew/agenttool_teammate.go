package crew

import (
	"context"
	"encoding/json"

	"github.com/cohort-dev/cohort/flags"
	"github.com/cohort-dev/cohort/tool"
)

// TeammateSpawner runs the teammate path of the Agent tool (package
// teammate implements it). Safe for concurrent use.
type TeammateSpawner interface {
	SpawnTeammate(ctx context.Context, rt *Crew, parent *Agent, env *tool.Env, in AgentInput) (tool.Result, error)
}

// TeammateReserver is implemented by a TeammateSpawner that can add the
// teammates of one assistant message to their team before any of them
// starts (see tool.Preparer): SpawnTeammate then finds the call's member
// reserved. ids are the calls' tool_use ids; release undoes what no spawn
// took.
type TeammateReserver interface {
	Reserve(ctx context.Context, rt *Crew, parent *Agent, ids []string, ins []AgentInput) (release func())
}

// prepare puts the calls in their message's sibling batch and reserves
// every teammate a message spawns, when the spawner can (teammate calls
// are WholeMessage, so they all arrive in the message's last Prepare).
func (t *agentTool) prepare(ctx context.Context, env *tool.Env, batch string, calls []tool.Call) func() {
	ids := make([]string, len(calls))
	for i, c := range calls {
		ids[i] = c.ID
	}
	unbatch := t.rt.Batch(batch, ids) // siblings share their prompt prefix (crew/siblings.go)
	unreserve := t.reserve(ctx, env, calls)
	return func() {
		if unreserve != nil {
			unreserve()
		}
		unbatch()
	}
}

// reserve puts every teammate the message spawns into the team file
// before any of them starts.
func (t *agentTool) reserve(ctx context.Context, env *tool.Env, calls []tool.Call) func() {
	res, ok := t.mates.(TeammateReserver)
	if !ok || !t.rt.Flags().Bool(flags.AgentTeams) {
		return nil
	}
	parent, ok := t.rt.Lookup(env.Caller.ID)
	if !ok || parent.Info().Depth > 0 {
		return nil
	}
	var ids []string
	var ins []AgentInput
	for _, c := range calls {
		var in AgentInput
		if json.Unmarshal(c.Input, &in) != nil || !namePattern.MatchString(in.Name) {
			continue
		}
		in, _, err := t.normalize(ctx, parent, in)
		if err != nil || in.TeamName == "" {
			continue
		}
		if in.Isolation == "worktree" {
			if ti, ok := t.mates.(TeammateIsolator); !ok || !ti.IsolatesTeammates() {
				continue
			}
		}
		ids, ins = append(ids, c.ID), append(ins, in)
	}
	if len(ins) == 0 {
		return nil
	}
	return res.Reserve(ctx, t.rt, parent, ids, ins)
}

// TeammateIsolator is implemented by a TeammateSpawner that gives
// teammates spawned with isolation "worktree" a worktree of their own (see
// LeaseWorktree). Without it such a spawn is refused, never run
// unisolated.
type TeammateIsolator interface {
	IsolatesTeammates() bool
}

// spawnTeammate runs the teammate path (team_name and name given) through
// the configured spawner.
func (t *agentTool) spawnTeammate(ctx context.Context, parent *Agent, env *tool.Env, in AgentInput) (tool.Result, error) {
	if !t.rt.Flags().Bool(flags.AgentTeams) {
		return tool.Errorf("Teams are turned off (the agent_teams flag); start a background agent (run_in_background: true) instead."), nil
	}
	if t.mates == nil {
		return tool.Errorf("Teammates are not available in this session; start a background agent (run_in_background: true) instead."), nil
	}
	if parent.Info().Depth > 0 {
		return tool.Errorf("Only the lead of a team can spawn teammates; you are a subagent. Start a subagent instead."), nil
	}
	if in.Isolation == "worktree" {
		if ti, ok := t.mates.(TeammateIsolator); !ok || !ti.IsolatesTeammates() {
			return tool.Errorf(`isolation: "worktree" is not available for teammates in this session, so %q was not started. Spawn the teammate without isolation, or start a background agent with isolation: "worktree" instead.`, in.Name), nil
		}
	}
	return t.mates.SpawnTeammate(ctx, t.rt, parent, env, in)
}
