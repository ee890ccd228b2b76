package agenttool

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/cohort-dev/cohort/agent"
	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/flags"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/prompt"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/tool"
)

// stopWait bounds how long a cancelled call waits for its child to finish
// (the task registry's own stop deadline is the same order).
const stopWait = 15 * time.Second

// modeRank orders modes by how much they allow without asking.
var modeRank = map[string]int{
	agent.ModePlan: 0, agent.ModeDefault: 1, agent.ModeDontAsk: 1,
	agent.ModeAcceptEdits: 2, agent.ModeBypassPermissions: 3,
}

// childMode resolves a child's permission mode: the definition's (or the
// parent's), overridden by the call's mode only when that is not more
// permissive than the parent's — a model cannot grant its child more than
// it has.
func childMode(parent *Agent, def *agent.Definition, requested string) (string, *tool.Result) {
	mode := agent.ResolveMode(parent.Mode, def)
	if requested == "" {
		return mode, nil
	}
	if modeRank[requested] > modeRank[parent.Mode] {
		r := tool.Errorf("mode %q would give the agent more permissions than you have (%s); use your mode or a stricter one.", requested, parent.Mode)
		return "", &r
	}
	return requested, nil
}

// childCwd resolves the working directory of a child.
func (rt *Runtime) childCwd(parent *Agent, in Input) (string, *tool.Result) {
	if in.Cwd == "" {
		return parent.Cwd, nil
	}
	if !rt.flags().Bool(flags.AgentCwd) {
		r := tool.Errorf("cwd needs the agent_cwd flag, which is off.")
		return "", &r
	}
	if !filepath.IsAbs(in.Cwd) {
		r := tool.Errorf("cwd must be an absolute path, got %q.", in.Cwd)
		return "", &r
	}
	if fi, err := os.Stat(in.Cwd); err != nil || !fi.IsDir() {
		r := tool.Errorf("cwd %q is not a directory.", in.Cwd)
		return "", &r
	}
	return in.Cwd, nil
}

// spawnSubagent runs the synchronous and background paths.
func (rt *Runtime) spawnSubagent(ctx context.Context, parent *Agent, env *tool.Env, in Input, def *agent.Definition, background bool) (tool.Result, error) {
	depth := parent.Depth + 1
	if depth > rt.cfg.MaxDepth {
		return tool.Errorf("Cannot start another agent: the nesting limit of %d levels is reached. Do this part of the work yourself.", rt.cfg.MaxDepth), nil
	}
	mode, bad := childMode(parent, def, in.Mode)
	if bad != nil {
		return *bad, nil
	}
	cwd, bad := rt.childCwd(parent, in)
	if bad != nil {
		return *bad, nil
	}
	role := agent.RoleSubagent
	if background {
		role = agent.RoleBackground
	}
	child := &Agent{
		ID: newAgentID(), Name: in.Name, Type: def.Name, Def: def, Role: role, Depth: depth,
		Model: agent.ResolveModel(rt.cfg.Getenv, in.Model, def.Model, parent.Model, rt.cfg.Aliases),
		Mode:  mode, Cwd: cwd, ParentID: parent.ID, Queue: task.NewQueue(), ToolUseID: env.ToolUseID,
	}
	ws, bad := rt.isolate(ctx, child, env, in)
	if bad != nil {
		return *bad, nil
	}
	p, err := rt.buildPlan(child, prompt.Chain{}, nil)
	if err != nil {
		ws.abandon(ctx)
		return tool.Errorf("Could not prepare the agent: %v", err), nil
	}
	ws.apply(&p.cfg)
	p.cfg.ParentToolUseID = env.ToolUseID
	p.cfg.Background = background
	p.cfg.Env.Files = env.Files.Clone()
	if p.cfg.MaxTurns == 0 {
		p.cfg.MaxTurns = rt.cfg.MaxTurns
	}
	opening := append(p.opening, llm.Text(in.Prompt))
	spec := task.Spec{
		ID: child.ID, Kind: task.KindLocalAgent, Description: in.Description, Prompt: in.Prompt,
		SubagentType: def.Name, AgentID: child.ID, Name: in.Name, ToolUseID: env.ToolUseID,
		ParentAgentID: parent.ID, Queue: parent.Queue, Background: background, Linked: !background,
		Transcript: p.transcript,
	}
	if !background && rt.flags().Bool(flags.AutoBackgroundAgents) {
		spec.AutoBackground = time.Duration(rt.flags().Int(flags.AutoBackgroundAfterS)) * time.Second
	}
	rt.register(child)
	t, err := rt.cfg.Tasks.Start(ctx, spec, ws.wrap(rt.runFunc(child, p, opening)))
	if err != nil {
		p.close()
		ws.abandon(ctx)
		return tool.Errorf("Could not start the agent: %v", err), nil
	}
	if background {
		return asyncLaunched(child, in, t.State().OutputFile), nil
	}
	return rt.await(ctx, child, in, t)
}

// await waits for a foreground child and turns its end into the call's
// result.
func (rt *Runtime) await(ctx context.Context, child *Agent, in Input, t *task.Task) (tool.Result, error) {
	st, err := t.Await(ctx)
	switch {
	case errors.Is(err, task.ErrBackgrounded):
		return asyncLaunched(child, in, st.OutputFile), nil
	case err != nil:
		// The caller is being cancelled; the linked child is too. Return
		// only once its run function has returned, so its tools' processes
		// are reaped before the caller goes on.
		select {
		case <-t.Done():
		case <-time.After(stopWait):
		}
		return tool.Result{}, err
	}
	return syncResult(child, st), nil
}

// runFunc returns the task body that runs child's engine.
func (rt *Runtime) runFunc(child *Agent, p *plan, opening []llm.Block) task.RunFunc {
	return func(ctx context.Context, t *task.Task) (task.Outcome, error) {
		defer p.close()
		if err := rt.acquire(ctx, t); err != nil {
			return task.Outcome{}, err
		}
		defer rt.release()
		if rt.cfg.Deadline > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, rt.cfg.Deadline)
			defer cancel()
		}
		cfg := p.cfg
		cfg.Sink = taskSink(t, cfg.Sink)
		eng := engine.New(cfg)
		child.mu.Lock()
		child.engine = eng
		child.mu.Unlock()
		res, err := eng.Send(ctx, subagentStart(ctx, cfg.Hooks, opening), "")
		res, err = rt.settle(ctx, eng, child.Queue, res, err)
		res, err = rt.subagentStop(ctx, cfg.Hooks, eng, res, err)
		child.setResult(res)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) && rt.cfg.Deadline > 0 {
				return task.Outcome{}, errorf("the agent ran past its deadline of %s", rt.cfg.Deadline)
			}
			return task.Outcome{}, err
		}
		return task.Outcome{Text: outcomeText(res), TotalTokens: res.Usage.Total(), ToolUses: res.ToolUses}, nil
	}
}

// outcomeText is the child's final text, with a note when it stopped at a
// limit rather than finishing.
func outcomeText(res *engine.Result) string {
	switch res.Stop {
	case engine.StopMaxTurns:
		return res.Text + "\n\n[The agent stopped at its turn limit before finishing.]"
	case engine.StopBudget:
		return res.Text + "\n\n[The agent stopped at its budget limit before finishing.]"
	}
	return res.Text
}

// taskSink forwards events and feeds the task's progress and output file.
func taskSink(t *task.Task, next engine.Sink) engine.Sink {
	out := t.Output()
	if out != nil && out.Linked() {
		out = nil // the output file is the transcript the engine records
	}
	return func(ev engine.Event) {
		if next != nil {
			next(ev)
		}
		switch ev.Kind {
		case engine.EventAssistant:
			if ev.Response != nil {
				t.RecordUsage(ev.Response.Usage)
			}
			if out != nil {
				_ = out.WriteJSON(outputLine{Type: "assistant", Message: ev.Message, Time: ev.Time})
			}
		case engine.EventUser:
			if out != nil {
				_ = out.WriteJSON(outputLine{Type: "user", Message: ev.Message, Time: ev.Time})
			}
		case engine.EventToolStart:
			t.RecordToolUse(ev.Tool.Name, activity(ev.Tool.Input))
		}
	}
}

// outputLine is one line of a task's output file (its transcript).
type outputLine struct {
	Type    string       `json:"type"`
	Message *llm.Message `json:"message"`
	Time    time.Time    `json:"timestamp"`
}
