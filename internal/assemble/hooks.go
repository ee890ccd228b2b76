package assemble

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/hook"
	"github.com/cohort-dev/cohort/internal/proc"
	"github.com/cohort-dev/cohort/sandbox"
	"github.com/cohort-dev/cohort/settings"
	"github.com/cohort-dev/cohort/tasklist"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/transcript"
)

// openHooks loads the settings' hooks into a runner shared by every agent
// of the session (hooks fire at every depth).
func (s *Session) openHooks() {
	set, problems := hook.FromSettings(s.Settings.Loaded)
	for _, p := range problems {
		fmt.Fprintf(s.Process.Stderr, "cohort: warning: %v\n", p)
	}
	if funcs := s.Hooks.Funcs; funcs != nil {
		set = hook.Merge(set, funcs)
	}
	s.openDefinitionHooks()
	if set.Len() == 0 {
		return
	}
	missing := set.MissingScripts(s.Process.ProjectRoot, s.Process.Cwd)
	for _, m := range missing {
		fmt.Fprintf(s.Process.Stderr, "cohort: warning: %s\n", m)
	}
	if s.sandbox != nil {
		s.hooksJudged(set, func(msg string) { fmt.Fprintf(s.Process.Stderr, "cohort: warning: %s\n", msg) })
		for _, c := range set.Unsandboxed() {
			fmt.Fprintf(s.Process.Stderr, "cohort: warning: %s\n", c.UnsandboxedNotice())
		}
		for _, n := range set.OutputNotices(hookSandbox{s.sandbox}, s.Process.Paths.Home, s.Process.ProjectRoot, s.Process.Cwd) {
			fmt.Fprintf(s.Process.Stderr, "cohort: warning: %s\n", n)
		}
	}
	s.hooks = hook.NewRunner(hook.Config{Hooks: set, ProjectDir: s.Process.ProjectRoot, Env: s.childEnviron(), ExtraEnv: s.settingsEnv(), Missing: append(missing, s.defMissing...),
		Models: hookModels{s}, Sandbox: s.hookSandbox(),
		Observer: func(r hook.Record) {
			if s.Process.Verbose {
				fmt.Fprintf(s.Process.Stderr, "[hook] %s %s exit=%d %s %s\n", r.Event, r.Command.Cmd, r.ExitCode, r.Decision, r.Duration)
			}
		}})
}

// hookScope binds the runner to one agent, adding its definition's own
// hooks.
func (s *Session) hookScope(a *crew.Agent) *hook.Scope {
	def := a.Def()
	if s.hooks == nil && (def == nil || def.Hooks == nil) {
		return nil
	}
	runner := s.hooks
	if runner == nil {
		runner = hook.NewRunner(hook.Config{ProjectDir: s.Process.ProjectRoot, Env: s.childEnviron(), ExtraEnv: s.settingsEnv(), Missing: s.defMissing,
			Sandbox: s.hookSandbox()})
	}
	info := a.Info()
	ag := hook.Subject{Caller: info, SessionID: s.id, TranscriptPath: s.transcriptPath(info), Effort: func() string {
		if e := a.Engine(); e != nil {
			return e.Effort()
		}
		return ""
	}}
	if def != nil && def.Hooks != nil {
		set, ok := s.defHooks[defKey(def)]
		if !ok {
			var problems []*settings.Problem
			set, problems = hook.FromDefinition(def.Source.Path, def.Hooks)
			for _, p := range problems {
				fmt.Fprintf(s.Process.Stderr, "cohort: warning: %v\n", p)
			}
		}
		ag.Hooks = set
	}
	return runner.For(ag)
}

// hookSandbox confines command hooks (hook.Config.Sandbox) as the Bash
// commands of the agent they fire for: nil, never a typed nil, without a
// sandbox.
func (s *Session) hookSandbox() hook.Sandbox {
	if s.sandbox == nil {
		return nil
	}
	return hookSandbox{s.sandbox}
}

// hookSandbox is the session's sandbox as hooks use it: the writing
// profile of the agent's cwd, whatever the permission mode (a hook is the
// user's, not a call the model made).
type hookSandbox struct{ sb *sandbox.Sandbox }

func (h hookSandbox) Launcher(ctx context.Context, cwd string, files []string) (proc.Launcher, error) {
	return h.sb.LauncherGranting(ctx, cwd, files)
}

func (h hookSandbox) Grantable(cwd, path string) error { return h.sb.Grantable(cwd, path) }

func (h hookSandbox) Env() []string { return h.sb.Env() }

func (h hookSandbox) Explain(output, cwd string) string {
	return h.sb.ExplainFor(output, cwd, sandbox.Writing)
}

// openDefinitionHooks reads the hooks of every agent definition loaded at
// start once, so that a command whose script did not exist then is known
// to the runner (hook.Config.Missing matches commands, not names) and
// never runs a script that appeared since: a definition's hook runs in
// the sandbox, as the settings' do, and may not opt out of it.
func (s *Session) openDefinitionHooks() {
	if s.cat == nil {
		return
	}
	s.defHooks = map[string]*hook.Set{}
	for _, def := range s.cat.List() {
		if def.Hooks == nil {
			continue
		}
		set, problems := hook.FromDefinition(def.Source.Path, def.Hooks)
		for _, p := range problems {
			fmt.Fprintf(s.Process.Stderr, "cohort: warning: %v\n", p)
		}
		s.defHooks[defKey(def)] = set
		s.defMissing = append(s.defMissing, set.MissingScripts(s.Process.ProjectRoot, s.Process.Cwd)...)
	}
}

// defKey names a definition among those loaded.
func defKey(def *agentdef.Definition) string { return def.Source.Path + "\x00" + def.Name }

// engineHooks is the runtime's hook factory (never a typed nil).
func (s *Session) engineHooks(a *crew.Agent) engine.Hooks {
	if sc := s.hookScope(a); sc != nil {
		return sc
	}
	return nil
}

func (s *Session) transcriptPath(a tool.Caller) string {
	if a.Depth == 0 {
		return transcript.Path(s.Process.ProjectDir, s.id)
	}
	return transcript.SidechainPath(s.Process.ProjectDir, s.id, a.ID)
}

// completionHooks wraps the shared task list's TaskUpdate so that marking a
// task completed fires the TaskCompleted hooks of the calling agent; a hook
// that blocks keeps the task open and tells the model why.
type completionHooks struct {
	tool.Tool
	s  *Session
	rt *crew.Crew
}

func (c completionHooks) Run(ctx context.Context, env *tool.Env, raw json.RawMessage) (tool.Result, error) {
	var in struct {
		TaskID string `json:"taskId"`
		Status string `json:"status"`
	}
	if json.Unmarshal(raw, &in) != nil || in.Status != "completed" || c.rt == nil {
		return c.Tool.Run(ctx, env, raw)
	}
	a, ok := c.rt.Lookup(env.Caller.ID)
	if !ok {
		return c.Tool.Run(ctx, env, raw)
	}
	th, ok := c.s.engineHooks(a).(hook.TaskHooks)
	if !ok {
		return c.Tool.Run(ctx, env, raw)
	}
	if out := th.TaskCompleted(ctx, hook.Task{ID: strings.TrimPrefix(in.TaskID, "#"), Status: "completed",
		TeammateName: env.Caller.Name, TeamName: env.Team}); out.Block {
		return tool.Errorf("A TaskCompleted hook kept task %s open: %s", in.TaskID, out.Reason), nil
	}
	return c.Tool.Run(ctx, env, raw)
}

// creationHooks wraps the shared task list's TaskCreate so that a created
// task fires the TaskCreated hooks of the calling agent; a hook that blocks
// takes the task back (deleted through update, the unwrapped TaskUpdate)
// and tells the model why.
type creationHooks struct {
	tool.Tool
	update tool.Tool
	s      *Session
	rt     *crew.Crew
}

func (c creationHooks) Run(ctx context.Context, env *tool.Env, raw json.RawMessage) (tool.Result, error) {
	res, err := c.Tool.Run(ctx, env, raw)
	t, ok := res.Meta.(tasklist.Task)
	if err != nil || res.IsError || !ok || c.rt == nil {
		return res, err
	}
	a, found := c.rt.Lookup(env.Caller.ID)
	if !found {
		return res, err
	}
	th, ok := c.s.engineHooks(a).(hook.TaskHooks)
	if !ok {
		return res, err
	}
	out := th.TaskCreated(ctx, hook.Task{ID: t.ID, Subject: t.Subject, Description: t.Description,
		TeammateName: env.Caller.Name, TeamName: env.Team})
	if !out.Block {
		return res, err
	}
	del, _ := json.Marshal(map[string]string{"taskId": t.ID, "status": "deleted"})
	if dres, derr := c.update.Run(ctx, env, del); derr != nil || dres.IsError {
		return tool.Errorf("A TaskCreated hook refused task #%s (%s), but it could not be deleted: %v %s", t.ID, out.Reason, derr, dres.TextOf()), nil
	}
	return tool.Errorf("A TaskCreated hook refused the task, so it was not created: %s", out.Reason), nil
}

// withCompletionHooks wraps TaskUpdate and TaskCreate in ts.
func (s *Session) withCompletionHooks(rt *crew.Crew, ts []tool.Tool) []tool.Tool {
	var update tool.Tool
	for i, t := range ts {
		if t.Def().Name == "TaskUpdate" {
			update = t
			ts[i] = completionHooks{Tool: t, s: s, rt: rt}
		}
	}
	for i, t := range ts {
		if t.Def().Name == "TaskCreate" && update != nil {
			ts[i] = creationHooks{Tool: t, update: update, s: s, rt: rt}
		}
	}
	return ts
}

// cwdHooks wraps EnterWorktree and ExitWorktree so that an agent they move
// fires its CwdChanged hooks, after the move.
type cwdHooks struct {
	tool.Tool
	s  *Session
	rt *crew.Crew
}

func (c cwdHooks) Run(ctx context.Context, env *tool.Env, raw json.RawMessage) (tool.Result, error) {
	a, ok := c.rt.Lookup(env.Caller.ID)
	if !ok {
		return c.Tool.Run(ctx, env, raw)
	}
	before := a.Info().Cwd
	res, err := c.Tool.Run(ctx, env, raw)
	if after := a.Info().Cwd; after != before {
		if h, ok := c.s.engineHooks(a).(hook.CwdHooks); ok {
			c.s.hookMessages(h.CwdChanged(ctx, before, after))
		}
	}
	return res, err
}

// withCwdHooks wraps every tool of ts in cwdHooks (the worktree tools).
func (s *Session) withCwdHooks(rt *crew.Crew, ts []tool.Tool) []tool.Tool {
	if rt == nil {
		return ts
	}
	for i, t := range ts {
		ts[i] = cwdHooks{Tool: t, s: s, rt: rt}
	}
	return ts
}
