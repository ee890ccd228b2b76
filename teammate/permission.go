package teammate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cohort-dev/cohort/internal/clip"
	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/tool/plan"
)

// leadPrompter is a teammate's approver: the team lead, asked over the
// mailbox with a permission_request. No answer in time is a denial.
type leadPrompter struct{ tm *Loop }

func (p leadPrompter) Prompt(ctx context.Context, req permission.PromptRequest) (permission.PromptDecision, error) {
	tm := p.tm
	id := mailbox.NewID(tm.cfg.Now())
	tm.emit(Event{Kind: EventPermission, Team: tm.cfg.Team, From: tm.name, To: "team-lead", Text: req.ToolName + " " + clip.String(strings.TrimSpace(string(req.Input)), 120)})
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
func (l *Lead) decide(ctx context.Context, m mailbox.Message) {
	pl, err := m.Payload()
	req, ok := pl.(mailbox.PermissionRequest)
	if err != nil || !ok {
		l.cfg.Logf("teammate: unreadable permission request from %s: %v", m.From, err)
		return
	}
	if req.WorkerName != m.From {
		l.cfg.Logf("teammate: permission request from %s names worker %s; answering the sender", m.From, req.WorkerName)
	}
	pr := permission.PromptRequest{ToolName: req.ToolName, Input: req.Input, ToolUseID: req.ToolUseID,
		AgentID: req.WorkerID, Reason: fmt.Sprintf("Teammate %s asks to run %s. %s", m.From, req.ToolName, req.Description)}
	dec, err := l.cfg.Prompter.Prompt(ctx, pr)
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
	l.emit(Event{Kind: EventPermission, Team: l.teamName(), From: "team-lead", To: m.From,
		Text: fmt.Sprintf("%s %s", req.ToolName, resp.Decision)})
	if err := l.sendPayload(ctx, m.From, resp); err != nil {
		l.cfg.Logf("teammate: answer permission request of %s: %v", m.From, err)
	}
}

// approvePlan sends a teammate's plan to the lead and waits for the verdict
// (its crew.PlanApprover); once approved the teammate works in its spawn
// mode, with that mode's pool.
func (tm *Loop) approvePlan(ctx context.Context, text string) (plan.Verdict, error) {
	id := mailbox.NewID(tm.cfg.Now())
	tm.emit(Event{Kind: EventPlan, Team: tm.cfg.Team, From: tm.name, To: "team-lead", Text: clip.String(strings.TrimSpace(text), 200)})
	m, err := tm.ask(ctx, id, mailbox.PlanApprovalRequest{RequestID: id, Plan: text}, tm.cfg.PlanTimeout)
	if errors.Is(err, errNoAnswer) {
		return plan.Verdict{Problem: fmt.Sprintf("The lead did not answer your plan within %s. Stay in plan mode; send a message to the lead if you need a decision.", tm.cfg.PlanTimeout)}, nil
	}
	if err != nil {
		return plan.Verdict{}, err
	}
	p, err := m.Payload()
	resp, ok := p.(mailbox.PlanApprovalResponse)
	if err != nil || !ok {
		return plan.Verdict{Problem: "The lead's answer to your plan could not be read; stay in plan mode and ask again."}, nil
	}
	if !resp.Approve {
		tm.emit(Event{Kind: EventPlan, Team: tm.cfg.Team, From: "team-lead", To: tm.name, Text: "rejected: " + resp.Feedback})
		return plan.Verdict{Feedback: resp.Feedback}, nil
	}
	tm.emit(Event{Kind: EventPlan, Team: tm.cfg.Team, From: "team-lead", To: tm.name, Text: "approved"})
	mode := permission.Mode(tm.cfg.Member.Mode)
	if mode == "" || mode == permission.ModePlan {
		mode = permission.ModeDefault
	}
	return plan.Verdict{Approved: true, Feedback: resp.Feedback, Mode: mode}, nil
}
