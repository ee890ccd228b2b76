// Package plan holds the plan-mode tools, EnterPlanMode and ExitPlanMode.
// In plan mode an agent investigates with read-only tools and designs an
// approach before it changes anything; ExitPlanMode presents the plan.
//
// Design decisions the spec leaves open:
//
//   - Who approves: an agent with a plan approver (a teammate, whose lead
//     decides over the mailbox) is asked through it; for any other agent
//     the permission gate's answer to the ExitPlanMode call is the
//     approval (in default mode it asks the user, in print mode a
//     --permission-prompt-command decides).
//   - Leaving plan mode returns to the mode the agent had before
//     EnterPlanMode, or to the mode the approver names (a teammate spawned
//     in plan mode works in its spawn mode once approved), else default.
//   - The tools reach the calling agent through Agents (the runtime's
//     Lookup), by the id in tool.Env.Agent.
package plan

import (
	"context"
	"sync"

	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/tool"
)

// Verdict is an approver's answer to a plan.
type Verdict struct {
	Approved bool
	Feedback string
	// Mode is the mode to work in once approved; empty means the mode the
	// agent had before plan mode, else default.
	Mode permission.Mode
	// Problem, when set, means no verdict could be had; it is shown to the
	// model, which stays in plan mode.
	Problem string
}

// Planner is what plan mode needs of the calling agent (crew.Planner has
// it). Safe for concurrent use.
type Planner interface {
	Mode() permission.Mode
	SetMode(permission.Mode) error
	// ApprovePlan asks the agent's plan approver; ok is false when it has
	// none.
	ApprovePlan(ctx context.Context, plan string) (v Verdict, ok bool, err error)
}

// Planners finds the calling agent by id.
type Planners func(id string) (Planner, bool)

// Tools returns EnterPlanMode and ExitPlanMode.
func Tools(agents Planners) []tool.Tool {
	s := &state{agents: agents, previous: map[string]permission.Mode{}}
	return []tool.Tool{
		tool.New(tool.Spec[struct{}]{Name: "EnterPlanMode", Description: enterPlanDescription, Input: tool.Object(),
			Traits: tool.Traits{ReadOnly: true}, Run: s.enter}),
		tool.New(tool.Spec[exitInput]{Name: "ExitPlanMode", Description: exitPlanDescription, Input: exitSchema, Run: s.exit}),
	}
}

type exitInput struct {
	Plan string `json:"plan"`
}

var exitSchema = tool.Object(tool.Required("plan", tool.String("The plan, in Markdown: steps, files to change, how to verify.").WithMinLength(1)))

// state is what the two tools share: the mode each agent had before it
// entered plan mode.
type state struct {
	agents   Planners
	mu       sync.Mutex
	previous map[string]permission.Mode
}

func (s *state) agent(env *tool.Env) (Planner, bool) {
	if s.agents == nil || env == nil {
		return nil, false
	}
	return s.agents(env.Caller.ID)
}

const enterPlanDescription = `Switches you to plan mode: you investigate with read-only tools and design an approach before changing anything. Use it when a task is large or ambiguous enough that the approach should be agreed first. Leave plan mode with ExitPlanMode, which presents your plan for approval.`

const exitPlanDescription = `Presents your plan for approval and, once it is approved, leaves plan mode so you can carry it out. Call it when your plan is complete: the steps, the files to change, and how you will verify the result. If the plan is rejected you get feedback and stay in plan mode to revise it.`

func (s *state) enter(_ context.Context, env *tool.Env, _ struct{}) (tool.Result, error) {
	a, ok := s.agent(env)
	if !ok {
		return tool.Errorf("Plan mode is not available for this agent."), nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if a.Mode() == permission.ModePlan {
		return tool.Text("You are already in plan mode."), nil
	}
	s.previous[env.Caller.ID] = a.Mode()
	if err := a.SetMode(permission.ModePlan); err != nil {
		return tool.Errorf("Could not enter plan mode: %v", err), nil
	}
	return tool.Text("You are in plan mode. Investigate with read-only tools and design the approach; calls that change files or run commands are refused until you leave it with ExitPlanMode."), nil
}

func (s *state) exit(ctx context.Context, env *tool.Env, in exitInput) (tool.Result, error) {
	a, ok := s.agent(env)
	if !ok {
		return tool.Errorf("Plan mode is not available for this agent."), nil
	}
	if a.Mode() != permission.ModePlan {
		return tool.Text("You are not in plan mode; go ahead."), nil
	}
	v, asked, err := a.ApprovePlan(ctx, in.Plan)
	switch {
	case err != nil:
		return tool.Result{}, err
	case !asked:
		// The permission gate already asked whoever approves this agent.
		v = Verdict{Approved: true}
	case v.Problem != "":
		return tool.Errorf("%s", v.Problem), nil
	case !v.Approved:
		return tool.Text("The lead rejected the plan. Feedback: " + v.Feedback + "\nRevise the plan and call ExitPlanMode again."), nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	next := v.Mode
	if next == "" || next == permission.ModePlan {
		next = s.previous[env.Caller.ID]
	}
	if next == "" || next == permission.ModePlan {
		next = permission.ModeDefault
	}
	delete(s.previous, env.Caller.ID)
	if err := a.SetMode(next); err != nil {
		return tool.Errorf("Could not leave plan mode: %v", err), nil
	}
	if !asked {
		return tool.Text("The plan was approved. You are out of plan mode; carry it out."), nil
	}
	text := "The lead approved your plan. You are out of plan mode and have your full set of tools; carry it out."
	if v.Feedback != "" {
		text += " Notes from the lead: " + v.Feedback
	}
	return tool.Text(text), nil
}
