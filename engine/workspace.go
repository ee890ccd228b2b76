package engine

import "github.com/cohort-dev/cohort/tool"

// SetWorkspace moves the agent to another working directory and write
// guard (EnterWorktree and ExitWorktree): tool calls that start after it
// returns see them in their Env. The system prompt is not rendered again —
// it is part of the cached prefix — so whoever moves the agent tells the
// model where it now works.
func (a *Conversation) SetWorkspace(cwd string, guard tool.WriteGuard) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cfg.Env.Cwd = cwd
	a.cfg.Env.Guard = guard
}

// SetAgent replaces the agent's record (tool.Env.Agent) and write guard
// from the next tool call on: the runtime calls it when the agent moves
// into or out of a worktree or changes permission mode, so that its tools
// see the same record the runtime keeps.
func (a *Conversation) SetAgent(rec tool.Caller, guard tool.WriteGuard) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.cfg.Env.Caller = rec
	a.cfg.Env.Guard = guard
}

// Workspace returns the agent's current working directory and write guard.
func (a *Conversation) Workspace() (cwd string, guard tool.WriteGuard) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cfg.Env.Cwd, a.cfg.Env.Guard
}

// toolEnv returns a copy of the tool context for one call.
func (a *Conversation) toolEnv() tool.Env {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cfg.Env
}
