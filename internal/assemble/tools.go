package assemble

import (
	"slices"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/tool/ask"
	"github.com/cohort-dev/cohort/tool/builtin"
	"github.com/cohort-dev/cohort/tool/plan"
	"github.com/cohort-dev/cohort/workflowrun"
	"github.com/cohort-dev/cohort/worktree"
)

// tools builds every tool of the session in canonical order (the order is
// part of the cached prompt prefix): the runtime's tool factory
// (crew.Config.Tools), called with the runtime being built. With rt nil
// (listings, and the known names agent definitions are checked against)
// the tools can only describe themselves.
func (s *Session) tools(rt *crew.Crew) []tool.Tool {
	var ts []tool.Tool
	cfg := builtin.Config{}
	var reg *task.Registry
	var queues func(string) *task.Queue
	ws := worktree.NewWorkspaces(worktree.WorkspacesConfig{})
	if rt != nil {
		var mates crew.TeammateSpawner
		if s.teamsOn && s.team != nil {
			mates = s.team
		}
		ts = append(ts, crew.NewAgentTool(crew.AgentToolConfig{Runtime: rt, Teammates: mates}))
		if s.workflowsOn {
			ts = append(ts, workflowrun.New(s.workflowConfig(rt)))
		}
		cfg.Shell.Background = rt.BackgroundShell
		reg, queues, ws = rt.Tasks(), rt.Queue, rt.Workspaces()
	}
	cfg.Shell.Env = s.settingsEnv()
	cfg.Shell.Reaper = s.reaper
	if s.sandbox != nil {
		cfg.Shell.Sandbox, cfg.Shell.Excluded = s.sandbox, s.bashExcluded
		cfg.Grep.Sandbox = s.grepSandbox
		cfg.Shell.KeepSandbox = s.checker != nil && s.checker.Unsandboxed() == permission.UnsandboxedIgnored
	}
	cfg.Web = s.webConfig()
	cfg.Search = s.searchConfig()
	ts = append(ts, builtin.All(cfg)...)
	ts = append(ts, task.NewOutputTool(reg, queues), task.NewStopTool(reg))
	ts = append(ts, s.withCwdHooks(rt, ws.Tools())...)
	ts = append(ts, s.teamTools(rt)...)
	if s.Tools.AskUser != nil {
		ts = append(ts, ask.New(s.Tools.AskUser))
	}
	ts = append(ts, s.Tools.Extra...)
	ts = leadOnlyLast(ts)
	if rt != nil {
		ts = s.inPool(ts) // the pool; definitions may still name the others
		ts = s.afterCheckpoint(ts)
	}
	// MCP tools and Skill are not Cohort's built-in tools: the pool leaves
	// them alone, as Claude Code's does.
	ts = append(ts, s.skillTools()...)
	ts = append(ts, s.mcp.Tools(true)...)
	if rt != nil && s.checker != nil {
		ts = slices.DeleteFunc(ts, func(t tool.Tool) bool { return s.checker.DeniedWhole(t.Def().Name) })
	}
	return ts
}

// leadOnly are the built-in tools only the lead has: no subagent, background
// agent or teammate is offered them (agentdef.Pool).
var leadOnly = map[string]bool{"Agent": true, "Workflow": true, "TaskOutput": true, "TaskStop": true,
	"TeamCreate": true, "TeamDelete": true, "EnterPlanMode": true, "AskUserQuestion": true}

// teamOnly are the built-in tools, beyond the others, a teammate has and
// a subagent or background agent does not (agentdef.Pool).
var teamOnly = map[string]bool{"SendMessage": true, "ListAgents": true, "TaskCreate": true, "TaskGet": true,
	"TaskUpdate": true, "TaskList": true, "ExitPlanMode": true}

// leadOnlyLast orders the tools by who has them, keeping each group's
// order: everyone's first, then the two a subagent has only when its
// definition names them (LS, MultiEdit), the team's, and the lead's own
// last. A subagent's or background agent's array is then a prefix of the
// lead's, and a teammate's a longer one, so the lead's first request
// writes the cache entries their first requests read
// (crew.sharedToolPrefix places the breakpoints).
func leadOnlyLast(ts []tool.Tool) []tool.Tool {
	rank := func(t tool.Tool) int {
		switch n := t.Def().Name; {
		case leadOnly[n]:
			return 3
		case teamOnly[n]:
			return 2
		case agentdef.NamedOnly(n):
			return 1
		}
		return 0
	}
	slices.SortStableFunc(ts, func(a, b tool.Tool) int { return rank(a) - rank(b) })
	return ts
}

// planTools are EnterPlanMode and ExitPlanMode, finding the calling agent
// in rt.
func planTools(rt *crew.Crew) []tool.Tool {
	return plan.Tools(func(id string) (plan.Planner, bool) {
		if rt == nil {
			return nil, false
		}
		a, ok := rt.Lookup(id)
		return a, ok
	})
}

// inPool keeps the tools the plan's pool names, in their canonical order;
// all of them when it is nil.
func (p *Plan) inPool(ts []tool.Tool) []tool.Tool {
	if p.Tools.Pool == nil {
		return ts
	}
	want := map[string]bool{}
	for _, n := range p.Tools.Pool {
		want[agentdef.CanonicalTool(n)] = true
	}
	return slices.DeleteFunc(ts, func(t tool.Tool) bool { return !want[t.Def().Name] })
}
