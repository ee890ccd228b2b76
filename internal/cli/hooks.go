package cli

import (
	"fmt"

	"github.com/cohort-dev/cohort/agenttool"
	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/hook"
	"github.com/cohort-dev/cohort/session"
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
	s.hooks = hook.NewRunner(hook.Config{Hooks: set, ProjectDir: s.projectRoot, Env: s.inv.Environ(),
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
		runner = hook.NewRunner(hook.Config{ProjectDir: s.projectRoot, Env: s.inv.Environ()})
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
