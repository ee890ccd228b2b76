package mailbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cohort-dev/cohort/internal/clip"
)

// Message types. The values are the wire names Claude Code uses.
const (
	TypeText                 Type = ""
	TypeShutdownRequest      Type = "shutdown_request"
	TypeShutdownResponse     Type = "shutdown_response"
	TypePlanApprovalRequest  Type = "plan_approval_request"
	TypePlanApprovalResponse Type = "plan_approval_response"
	TypePermissionRequest    Type = "permission_request"
	TypePermissionResponse   Type = "permission_response"
	TypeIdleNotification     Type = "idle_notification"
)

var (
	// ErrNotStructured: Payload was called on a plain-text message.
	ErrNotStructured = errors.New("plain-text message has no payload")
	// ErrUnknownType: the message type is not one this package knows.
	ErrUnknownType = errors.New("unknown message type")
)

// Payload is the body of a structured message. The set is closed: only the
// types in this package implement it.
type Payload interface {
	// MessageType is the Type a message carrying this payload has.
	MessageType() Type
	validate() error
}

// ShutdownRequest asks a teammate to finish and exit.
type ShutdownRequest struct {
	RequestID string `json:"request_id"`
	Reason    string `json:"reason,omitempty"`
}

// ShutdownResponse answers a ShutdownRequest.
type ShutdownResponse struct {
	RequestID string `json:"request_id"`
	Approve   bool   `json:"approve"`
	Reason    string `json:"reason,omitempty"`
}

// PlanApprovalRequest carries a teammate's plan to the lead.
type PlanApprovalRequest struct {
	RequestID string `json:"request_id"`
	Plan      string `json:"plan"`
}

// PlanApprovalResponse is the lead's verdict on a plan.
type PlanApprovalResponse struct {
	RequestID string `json:"request_id"`
	Approve   bool   `json:"approve"`
	Feedback  string `json:"feedback,omitempty"`
}

// PermissionRequest asks the lead to decide a tool call a worker may not
// make on its own.
type PermissionRequest struct {
	ID          string          `json:"id"`
	WorkerID    string          `json:"workerId"`
	WorkerName  string          `json:"workerName"`
	WorkerColor string          `json:"workerColor"`
	TeamName    string          `json:"teamName"`
	ToolName    string          `json:"toolName"`
	ToolUseID   string          `json:"toolUseId"`
	Description string          `json:"description"`
	Input       json.RawMessage `json:"input"`
}

// Decision is the verdict of a PermissionResponse.
type Decision string

// Permission decisions, named like permission rule behaviours.
const (
	DecisionAllow Decision = "allow"
	DecisionDeny  Decision = "deny"
)

// PermissionResponse answers a PermissionRequest. Updates holds permission
// rule updates in the permission package's JSON form; this package passes
// them through unread.
type PermissionResponse struct {
	RequestID string          `json:"request_id"`
	Decision  Decision        `json:"decision"`
	Updates   json.RawMessage `json:"updates,omitempty"`
	Feedback  string          `json:"feedback,omitempty"`
}

// IdleNotification tells the lead a teammate finished its turn and waits.
// Field names follow Claude Code's.
type IdleNotification struct {
	IdleReason      string `json:"idleReason,omitempty"`      // available | interrupted | failed | capped
	Summary         string `json:"summary,omitempty"`         // what the turn did
	CompletedTaskID string `json:"completedTaskId,omitempty"` // shared-task id finished this turn
	CompletedStatus string `json:"completedStatus,omitempty"` // resolved | blocked | failed
	FailureReason   string `json:"failureReason,omitempty"`
}

// MessageType implements Payload.
func (ShutdownRequest) MessageType() Type { return TypeShutdownRequest }

// MessageType implements Payload.
func (ShutdownResponse) MessageType() Type { return TypeShutdownResponse }

// MessageType implements Payload.
func (PlanApprovalRequest) MessageType() Type { return TypePlanApprovalRequest }

// MessageType implements Payload.
func (PlanApprovalResponse) MessageType() Type { return TypePlanApprovalResponse }

// MessageType implements Payload.
func (PermissionRequest) MessageType() Type { return TypePermissionRequest }

// MessageType implements Payload.
func (PermissionResponse) MessageType() Type { return TypePermissionResponse }

// MessageType implements Payload.
func (IdleNotification) MessageType() Type { return TypeIdleNotification }

func needID(field, v string) error {
	if v == "" {
		return fmt.Errorf("%s is empty", field)
	}
	return nil
}

func (p ShutdownRequest) validate() error      { return needID("request_id", p.RequestID) }
func (p ShutdownResponse) validate() error     { return needID("request_id", p.RequestID) }
func (p PlanApprovalResponse) validate() error { return needID("request_id", p.RequestID) }
func (IdleNotification) validate() error       { return nil }

func (p PlanApprovalRequest) validate() error {
	if err := needID("request_id", p.RequestID); err != nil {
		return err
	}
	return needID("plan", p.Plan)
}

func (p PermissionRequest) validate() error {
	for _, f := range [][2]string{{"id", p.ID}, {"workerId", p.WorkerID}, {"workerName", p.WorkerName},
		{"teamName", p.TeamName}, {"toolName", p.ToolName}, {"toolUseId", p.ToolUseID}} {
		if err := needID(f[0], f[1]); err != nil {
			return err
		}
	}
	in := bytes.TrimSpace(p.Input)
	if len(in) == 0 || in[0] != '{' || !json.Valid(in) {
		return errors.New("input is not a JSON object")
	}
	return nil
}

func (p PermissionResponse) validate() error {
	if err := needID("request_id", p.RequestID); err != nil {
		return err
	}
	if p.Decision != DecisionAllow && p.Decision != DecisionDeny {
		return fmt.Errorf("decision %q is neither %q nor %q", p.Decision, DecisionAllow, DecisionDeny)
	}
	if len(p.Updates) > 0 && !json.Valid(p.Updates) {
		return errors.New("updates is not valid JSON")
	}
	return nil
}

// NewMessage returns a message from → to carrying p: Type is p's type and
// Text its JSON, which (as in Claude Code) repeats the type in a "type"
// field. Id and timestamp are left for Append to assign.
func NewMessage(from, to string, p Payload) (Message, error) {
	text, err := EncodePayload(p)
	if err != nil {
		return Message{}, err
	}
	return Message{From: from, To: to, Type: p.MessageType(), Text: text}, nil
}

// EncodePayload validates p and returns its JSON text with a leading "type"
// field.
func EncodePayload(p Payload) (string, error) {
	if err := p.validate(); err != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrInvalidMessage, p.MessageType(), err)
	}
	body, err := json.Marshal(p)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %v", ErrInvalidMessage, p.MessageType(), err)
	}
	head, _ := json.Marshal(struct {
		Type Type `json:"type"`
	}{p.MessageType()})
	if string(body) == "{}" {
		return string(head), nil
	}
	return string(head[:len(head)-1]) + "," + string(body[1:]), nil
}

// Payload decodes m's structured payload: one of ShutdownRequest,
// ShutdownResponse, PlanApprovalRequest, PlanApprovalResponse,
// PermissionRequest, PermissionResponse or IdleNotification (as values).
// Plain text gives ErrNotStructured, an unknown type ErrUnknownType, and a
// payload with missing fields, or whose "type" field disagrees with m.Type,
// ErrInvalidMessage.
func (m Message) Payload() (Payload, error) {
	switch m.Type {
	case TypeText:
		return nil, ErrNotStructured
	case TypeShutdownRequest:
		return decodeAs[ShutdownRequest](m)
	case TypeShutdownResponse:
		return decodeAs[ShutdownResponse](m)
	case TypePlanApprovalRequest:
		return decodeAs[PlanApprovalRequest](m)
	case TypePlanApprovalResponse:
		return decodeAs[PlanApprovalResponse](m)
	case TypePermissionRequest:
		return decodeAs[PermissionRequest](m)
	case TypePermissionResponse:
		return decodeAs[PermissionResponse](m)
	case TypeIdleNotification:
		return decodeAs[IdleNotification](m)
	}
	return nil, fmt.Errorf("%w %q in message %s from %s", ErrUnknownType, clip.String(string(m.Type), 40), m.ID, m.From)
}

func decodeAs[T Payload](m Message) (Payload, error) {
	bad := func(err error) (Payload, error) {
		return nil, fmt.Errorf("%w: %s payload of message %s from %s: %v", ErrInvalidMessage, m.Type, m.ID, m.From, err)
	}
	var head struct {
		Type *Type `json:"type"`
	}
	if err := json.Unmarshal([]byte(m.Text), &head); err != nil {
		return bad(err)
	}
	if head.Type != nil && *head.Type != m.Type {
		return bad(fmt.Errorf("payload says type %q", clip.String(string(*head.Type), 40)))
	}
	var p T
	if err := json.Unmarshal([]byte(m.Text), &p); err != nil {
		return bad(err)
	}
	if err := p.validate(); err != nil {
		return bad(err)
	}
	return p, nil
}
