package swarm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cohort-dev/cohort/agenttool"
	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/permission"
)

// teammateGate checks a teammate's calls with its own rules and sends what
// would need approval to the lead. ExitPlanMode passes: the tool itself asks
// the lead to approve the plan.
type teammateGate struct{ tm *Teammate }

func (g *teammateGate) Check(ctx context.Context, c *engine.Call) engine.Verdict {
	if c.Name == "ExitPlanMode" {
		return engine.Verdict{Allow: true}
	}
	return agenttool.PermissionGate{Checker: g.tm.cfg.Checker, Prompter: leadPrompter{g.tm}}.Check(ctx, c)
}

// leadPrompter is a teammate's approver: the team lead, asked over the
// mailbox with a permission_request. No answer in time is a denial.
type leadPrompter struct{ tm *Teammate }

func (p leadPrompter) Prompt(ctx context.Context, req permission.PromptRequest) (permission.PromptDecision, error) {
	tm := p.tm
	id := mailbox.NewID(tm.cfg.Now())
	tm.emit(Event{Kind: EventPermission, Team: tm.cfg.Team, From: tm.name, To: "team-lead", Text: req.ToolName + " " + clip(string(req.Input), 120)})
	m, err := tm.ask(ctx, id, mailbox.PermissionRequest{
		ID: id, WorkerID: tm.cfg.Member.AgentID, WorkerName: tm.name, WorkerColor: tm.cfg.Member.Color,
		TeamName: tm.cfg.Team, ToolName: req.ToolName, ToolUseID: req.ToolUseID, Description: req.Reason, Input: req.Input,
	}, tm.cfg.PermissionTimeout)
	if errors.Is(err, errNoAnswer) {
		return permission.PromptDecision{Message: fmt.Sprintf("The lead did not answer the permission request within %s, so the call was denied.", tm.cfg.PermissionTimeout)}, nil
	}
	if err != nil {
		return permission.PromptDecision{Message: "The permission request could not be sent to the lead: " + err.Error()}, err
	}
	pl, err := m.Payload()
	resp, ok := pl.(mailbox.PermissionResponse)
	if err != nil || !ok {
		return permission.PromptDecision{Message: "The lead's answer could not be read, so the call was denied."}, nil
	}
	d := permission.PromptDecision{Allow: resp.Decision == mailbox.DecisionAllow, Message: resp.Feedback}
	if !d.Allow && d.Message == "" {
		d.Message = "The team lead denied this call."
	}
	if len(resp.Updates) > 0 {
		if err := json.Unmarshal(resp.Updates, &d.Updates); err != nil {
			tm.cfg.Logf("teammate %s: rule updates from the lead ignored: %v", tm.name, err)
			d.Updates = nil
		}
	}
	return d, nil
}

// decide answers one teammate's permission request with the lead's
// approver and writes the response to the worker's inbox.
func (sw *Swarm) decide(ctx context.Context, m mailbox.Message) {
	pl, err := m.Payload()
	req, ok := pl.(mailbox.PermissionRequest)
	if err != nil || !ok {
		sw.cfg.Logf("swarm: unreadable permission request from %s: %v", m.From, err)
		return
	}
	if req.WorkerName != m.From {
		sw.cfg.Logf("swarm: permission request from %s names worker %s; answering the sender", m.From, req.WorkerName)
	}
	pr := permission.PromptRequest{ToolName: req.ToolName, Input: req.Input, ToolUseID: req.ToolUseID,
		AgentID: req.WorkerID, Reason: fmt.Sprintf("Teammate %s asks to run %s. %s", m.From, req.ToolName, req.Description)}
	dec, err := sw.cfg.Prompter.Prompt(ctx, pr)
	resp := mailbox.PermissionResponse{RequestID: req.ID, Decision: mailbox.DecisionDeny, Feedback: dec.Message}
	if err == nil && dec.Allow {
		resp.Decision = mailbox.DecisionAllow
	}
	if err != nil && resp.Feedback == "" {
		resp.Feedback = "The lead could not decide: " + err.Error()
	}
	if len(dec.Updates) > 0 && resp.Decision == mailbox.DecisionAllow {
		resp.Updates, _ = json.Marshal(dec.Updates)
	}
	sw.emit(Event{Kind: EventPermission, Team: sw.teamName(), From: "team-lead", To: m.From,
		Text: fmt.Sprintf("%s %s", req.ToolName, resp.Decision)})
	if err := sw.sendPayload(ctx, m.From, resp); err != nil {
		sw.cfg.Logf("swarm: answer permission request of %s: %v", m.From, err)
	}
}
