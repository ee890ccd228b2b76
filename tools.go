package cohort

import (
	"context"
	"slices"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/agenttool"
	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/flags"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/tool/ask"
	"github.com/cohort-dev/cohort/tool/builtin"
	"github.com/cohort-dev/cohort/tool/plan"
	"github.com/cohort-dev/cohort/workflowtool"
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
		var mates agenttool.TeammateSpawner
		if s.teamsOn && s.team != nil {
			mates = s.team
		}
		ts = append(ts, agenttool.New(agenttool.Config{Runtime: rt, Teammates: mates}))
		if s.flags.Bool(flags.Workflows) {
			ts = append(ts, workflowtool.New(s.workflowConfig(rt)))
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
	ts = append(ts, ws.Tools()...)
	ts = append(ts, s.teamTools(rt)...)
	if s.cfg.AskUser != nil {
		ts = append(ts, ask.New(func(ctx context.Context, agentID string, qs []ask.Question) (map[string]string, error) {
			return s.cfg.AskUser(ctx, AskRequest{AgentID: agentID, Questions: qs})
		}))
	}
	ts = append(ts, s.cfg.Tools...)
	if rt != nil {
		ts = s.cfg.inPool(ts) // --tools; definitions may still name the others
	}
	// MCP tools and Skill are not Cohort's built-in tools: --tools leaves
	// them alone, as Claude Code's does.
	ts = append(ts, s.skillTools()...)
	return append(ts, s.mcp.Tools(true)...)
}

// toolNames are the names of every tool a session has (Agent included): the
// tools agent definitions may name.
func (s *Session) toolNames() []string {
	known := []string{agenttool.Name}
	for _, t := range s.tools(nil) {
		known = append(known, t.Def().Name)
	}
	return known
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

// knownTools are the tool names agent definitions may name: Cohort's and
// the Config's.
func (s *Session) knownTools() []string {
	known := slices.Clone(agentdef.CohortTools)
	for _, t := range s.cfg.Tools {
		known = append(known, t.Def().Name)
	}
	return known
}
