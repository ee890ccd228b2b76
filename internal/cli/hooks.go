package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cohort-dev/cohort/agenttool"
	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/hook"
	"github.com/cohort-dev/cohort/session"
	"github.com/cohort-dev/cohort/tool"
)

// openHooks loads the settings' hooks into a runner shared by every agent
// of the session (hooks fire at every depth).
func (s *sess) openHooks() {
	set, problems := hook.FromSettings(s.settings)
	for _, p := range problems {
		fmt.Fprintf(s.inv.Stderr, "cohort: warning: %v\n", p)
	}
	if set.Len() == 0 {
		return
	}
	s.hooks = hook.NewRunner(hook.Config{Hooks: set, ProjectDir: s.projectRoot, Env: s.inv.Environ(), ExtraEnv: s.settingsEnv(),
		Observer: func(r hook.Record) {
			if s.o.verbose {
				fmt.Fprintf(s.inv.Stderr, "[hook] %s %s exit=%d %s %s\n", r.Event, r.Command.Cmd, r.ExitCode, r.Decision, r.Duration)
			}
		}})
}

// hookScope binds the runner to one agent, adding its definition's own
// hooks.
func (s *sess) hookScope(a *agenttool.Agent) *hook.Scope {
	if s.hooks == nil && (a.Def == nil || a.Def.Hooks == nil) {
		return nil
	}
	runner := s.hooks
	if runner == nil {
		runner = hook.NewRunner(hook.Config{ProjectDir: s.projectRoot, Env: s.inv.Environ(), ExtraEnv: s.settingsEnv()})
	}
	ag := hook.Agent{SessionID: s.id, Cwd: a.Cwd, PermissionMode: a.Mode, ID: a.ID, Type: a.Type, Depth: a.Depth,
		ParentToolUseID: a.ToolUseID, TranscriptPath: s.transcriptPath(a)}
	if a.Def != nil && a.Def.Hooks != nil {
		set, problems := hook.FromDefinition(a.Def.Source.Path, a.Def.Hooks)
		for _, p := range problems {
			fmt.Fprintf(s.inv.Stderr, "cohort: warning: %v\n", p)
		}
		ag.Hooks = set
	}
	return runner.For(ag)
}

// engineHooks is the runtime's hook factory (never a typed nil).
func (s *sess) engineHooks(a *agenttool.Agent) engine.Hooks {
	if sc := s.hookScope(a); sc != nil {
		return sc
	}
	return nil
}

func (s *sess) transcriptPath(a *agenttool.Agent) string {
	if a.Depth == 0 {
		return session.Path(s.projectDir, s.id)
	}
	return session.SidechainPath(s.projectDir, s.id, a.ID)
}

// completionHooks wraps the shared task list's TaskUpdate so that marking a
// task completed fires the TaskCompleted hooks of the calling agent; a hook
// that blocks keeps the task open and tells the model why.
type completionHooks struct {
	tool.Tool
	s *sess
}

func (c completionHooks) Run(ctx context.Context, env *tool.Env, raw json.RawMessage) (tool.Result, error) {
	var in struct {
		TaskID string `json:"taskId"`
		Status string `json:"status"`
	}
	if json.Unmarshal(raw, &in) != nil || in.Status != "completed" || c.s.rt == nil {
		return c.Tool.Run(ctx, env, raw)
	}
	a, ok := c.s.rt.Lookup(env.AgentID)
	if !ok {
		return c.Tool.Run(ctx, env, raw)
	}
	if out := c.s.hookScope(a).TaskCompleted(ctx, hook.Task{ID: strings.TrimPrefix(in.TaskID, "#"), Status: "completed",
		TeammateName: env.AgentName, TeamName: env.Team}); out.Block {
		return tool.Errorf("A TaskCompleted hook kept task %s open: %s", in.TaskID, out.Reason), nil
	}
	return c.Tool.Run(ctx, env, raw)
}

// withCompletionHooks wraps TaskUpdate in ts.
func (s *sess) withCompletionHooks(ts []tool.Tool) []tool.Tool {
	for i, t := range ts {
		if t.Def().Name == "TaskUpdate" {
			ts[i] = completionHooks{Tool: t, s: s}
		}
	}
	return ts
}
