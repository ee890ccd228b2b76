package cli

import (
	"context"

	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/tool/builtin"
	"github.com/cohort-dev/cohort/tool/shell"
)

// tools returns every tool of the session but Agent, in canonical order
// (the order is part of the cached prompt prefix).
func (s *sess) tools() []tool.Tool {
	cfg := builtin.Config{}
	cfg.Shell = shell.Config{Background: s.backgroundShell, Env: s.settingsEnv()}
	if s.sandbox != nil {
		cfg.Shell.Sandbox, cfg.Shell.Excluded = s.sandbox, s.bashExcluded
	}
	cfg.Web = s.webConfig()
	ts := builtin.All(cfg)
	if s.tasks != nil {
		ts = append(ts, task.NewOutputTool(s.tasks, s.leadQueue()), task.NewStopTool(s.tasks))
	}
	ts = append(ts, s.worktreeTools()...)
	return append(ts, s.teamTools()...)
}

// backgroundShell hands run_in_background commands to the runtime, which
// exists only after the tools are built.
func (s *sess) backgroundShell(ctx context.Context, env *tool.Env, command, description string, run shell.RunFunc) (string, string, error) {
	return s.rt.BackgroundShell(ctx, env, command, description, run)
}
