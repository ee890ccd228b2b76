package swarm

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/cohort-dev/cohort/agent"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/tool"
)

// modeHolder is the permission state plan-mode tools switch: an agent's
// checker and, for a teammate, the teammate (whose plan goes to the lead).
type modeHolder struct {
	mu       sync.Mutex
	checker  *permission.Checker
	tm       *Teammate
	previous permission.Mode // the mode before EnterPlanMode
}

// RegisterAgent lets plan-mode tools switch the mode of agent id (the lead
// registers its checker; teammates are registered when built).
func (sw *Swarm) RegisterAgent(id string, c *permission.Checker) { sw.registerChecker(id, c, nil) }

func (sw *Swarm) registerChecker(id string, c *permission.Checker, tm *Teammate) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.checkers[id] = &modeHolder{checker: c, tm: tm}
}

func (sw *Swarm) holder(id string) *modeHolder {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return sw.checkers[id]
}

// PlanTools returns EnterPlanMode and ExitPlanMode for sw.
func PlanTools(sw *Swarm) []tool.Tool { return []tool.Tool{&enterPlan{sw}, &exitPlan{sw}} }

type enterPlan struct{ sw *Swarm }
type exitPlan struct{ sw *Swarm }

const enterPlanDescription = `Switches you to plan mode: you investigate with read-only tools and design an approach before changing anything. Use it when a task is large or ambiguous enough that the approach should be agreed first. Leave plan mode with ExitPlanMode, which presents your plan for approval.`

const exitPlanDescription = `Presents your plan for approval and, once it is approved, leaves plan mode so you can carry it out. Call it when your plan is complete: the steps, the files to change, and how you will verify the result. If the plan is rejected you get feedback and stay in plan mode to revise it.`

func (t *enterPlan) Def() llm.ToolDef {
	return llm.ToolDef{Name: "EnterPlanMode", Description: enterPlanDescription, InputSchema: tool.Object().JSON()}
}
func (t *enterPlan) Traits(json.RawMessage) tool.Traits {
	return tool.Traits{ReadOnly: true}
}

func (t *enterPlan) Run(_ context.Context, env *tool.Env, _ json.RawMessage) (tool.Result, error) {
	h := t.sw.holder(env.AgentID)
	if h == nil {
		return tool.Errorf("Plan mode is not available for this agent."), nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.checker.Mode() == permission.ModePlan {
		return tool.Text("You are already in plan mode."), nil
	}
	h.previous = h.checker.Mode()
	if err := h.checker.SetMode(permission.ModePlan); err != nil {
		return tool.Errorf("Could not enter plan mode: %v", err), nil
	}
	return tool.Text("You are in plan mode. Investigate with read-only tools and design the approach; calls that change files or run commands are refused until you leave it with ExitPlanMode."), nil
}

func (t *exitPlan) Def() llm.ToolDef {
	s := tool.Object(tool.Required("plan", tool.String("The plan, in Markdown: steps, files to change, how to verify.").WithMinLength(1)))
	return llm.ToolDef{Name: "ExitPlanMode", Description: exitPlanDescription, InputSchema: s.JSON()}
}
func (t *exitPlan) Traits(json.RawMessage) tool.Traits { return tool.Traits{} }

func (t *exitPlan) Run(ctx context.Context, env *tool.Env, raw json.RawMessage) (tool.Result, error) {
	var in struct {
		Plan string `json:"plan"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return tool.Errorf("ExitPlanMode input is not valid: %v", err), nil
	}
	h := t.sw.holder(env.AgentID)
	if h == nil {
		return tool.Errorf("Plan mode is not available for this agent."), nil
	}
	if h.checker.Mode() != permission.ModePlan {
		return tool.Text("You are not in plan mode; go ahead."), nil
	}
	if h.tm != nil {
		return t.sw.teammatePlan(ctx, h, in.Plan)
	}
	// The lead: the permission gate already asked the user to approve.
	h.mu.Lock()
	defer h.mu.Unlock()
	next := h.previous
	if next == "" || next == permission.ModePlan {
		next = permission.ModeDefault
	}
	if err := h.checker.SetMode(next); err != nil {
		return tool.Errorf("Could not leave plan mode: %v", err), nil
	}
	return tool.Text("The plan was approved. You are out of plan mode; carry it out."), nil
}

// teammatePlan sends a teammate's plan to the lead and waits for the
// verdict; on approval the teammate leaves plan mode and gets its full pool.
func (sw *Swarm) teammatePlan(ctx context.Context, h *modeHolder, plan string) (tool.Result, error) {
	tm := h.tm
	id := mailbox.NewID(tm.cfg.Now())
	tm.emit(Event{Kind: EventPlan, Team: tm.cfg.Team, From: tm.name, To: "team-lead", Text: clip(plan, 200)})
	m, err := tm.ask(ctx, id, mailbox.PlanApprovalRequest{RequestID: id, Plan: plan}, tm.cfg.PlanTimeout)
	if errors.Is(err, errNoAnswer) {
		return tool.Errorf("The lead did not answer your plan within %s. Stay in plan mode; send a message to the lead if you need a decision.", tm.cfg.PlanTimeout), nil
	}
	if err != nil {
		return tool.Result{}, err
	}
	p, err := m.Payload()
	resp, ok := p.(mailbox.PlanApprovalResponse)
	if err != nil || !ok {
		return tool.Errorf("The lead's answer to your plan could not be read; stay in plan mode and ask again."), nil
	}
	if !resp.Approve {
		tm.emit(Event{Kind: EventPlan, Team: tm.cfg.Team, From: "team-lead", To: tm.name, Text: "rejected: " + resp.Feedback})
		return tool.Text("The lead rejected the plan. Feedback: " + resp.Feedback + "\nRevise the plan and call ExitPlanMode again."), nil
	}
	mode := tm.cfg.Member.Mode
	if mode == "" || mode == agent.ModePlan {
		mode = agent.ModeDefault
	}
	h.mu.Lock()
	err = h.checker.SetMode(permission.Mode(mode))
	h.mu.Unlock()
	if err != nil {
		return tool.Errorf("Could not leave plan mode: %v", err), nil
	}
	tm.widen(mode)
	tm.emit(Event{Kind: EventPlan, Team: tm.cfg.Team, From: "team-lead", To: tm.name, Text: "approved"})
	text := "The lead approved your plan. You are out of plan mode and have your full set of tools; carry it out."
	if resp.Feedback != "" {
		text += " Notes from the lead: " + resp.Feedback
	}
	return tool.Text(text), nil
}

// widen gives an approved teammate the pool of its (new) mode.
func (tm *Teammate) widen(mode string) {
	a := tm.built.Agent
	a.Mode = mode
	tools := tm.cfg.Runtime.PoolFor(a)
	a.SetTools(tools)
	tm.eng.SetTools(tools)
	tm.mu.Lock()
	tm.planned = true
	tm.mu.Unlock()
}
