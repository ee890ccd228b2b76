package mailbox

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPayloadRoundTrip(t *testing.T) {
	tests := []struct {
		p    Payload
		text string
	}{
		{ShutdownRequest{RequestID: "r1", Reason: "work is done"},
			`{"type":"shutdown_request","request_id":"r1","reason":"work is done"}`},
		{ShutdownResponse{RequestID: "r1", Approve: false, Reason: "still testing"},
			`{"type":"shutdown_response","request_id":"r1","approve":false,"reason":"still testing"}`},
		{PlanApprovalRequest{RequestID: "p1", Plan: "1. read\n2. edit"},
			`{"type":"plan_approval_request","request_id":"p1","plan":"1. read\n2. edit"}`},
		{PlanApprovalResponse{RequestID: "p1", Approve: true},
			`{"type":"plan_approval_response","request_id":"p1","approve":true}`},
		{PermissionRequest{ID: "q1", WorkerID: "bob@t", WorkerName: "bob", WorkerColor: "green", TeamName: "t",
			ToolName: "Bash", ToolUseID: "toolu_1", Description: "run tests", Input: json.RawMessage(`{"command":"go test ./..."}`)},
			`{"type":"permission_request","id":"q1","workerId":"bob@t","workerName":"bob","workerColor":"green","teamName":"t",` +
				`"toolName":"Bash","toolUseId":"toolu_1","description":"run tests","input":{"command":"go test ./..."}}`},
		{PermissionResponse{RequestID: "q1", Decision: DecisionAllow, Updates: json.RawMessage(`[{"rule":"Bash(go test:*)"}]`)},
			`{"type":"permission_response","request_id":"q1","decision":"allow","updates":[{"rule":"Bash(go test:*)"}]}`},
		{IdleNotification{}, `{"type":"idle_notification"}`},
		{IdleNotification{IdleReason: "available", CompletedTaskID: "3", CompletedStatus: "resolved"},
			`{"type":"idle_notification","idleReason":"available","completedTaskId":"3","completedStatus":"resolved"}`},
	}
	for _, tt := range tests {
		t.Run(string(tt.p.MessageType()), func(t *testing.T) {
			m, err := NewMessage("alice", "team-lead", tt.p)
			if err != nil {
				t.Fatal(err)
			}
			if m.Type != tt.p.MessageType() {
				t.Errorf("Type = %q, want %q", m.Type, tt.p.MessageType())
			}
			if diff := cmp.Diff(tt.text, m.Text); diff != "" {
				t.Errorf("payload text (-want +got):\n%s", diff)
			}
			got, err := m.Payload()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.p, got); diff != "" {
				t.Errorf("decoded payload (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPayloadErrors(t *testing.T) {
	msg := func(typ Type, text string) Message { return Message{ID: "m1", From: "a", Type: typ, Text: text} }
	tests := []struct {
		name    string
		m       Message
		wantErr error
		msg     string
	}{
		{"plain text", msg("", "hello"), ErrNotStructured, ""},
		{"unknown type", msg("telepathy", "{}"), ErrUnknownType, "telepathy"},
		{"not json", msg(TypeShutdownRequest, "please stop"), ErrInvalidMessage, "shutdown_request"},
		{"missing request id", msg(TypeShutdownResponse, `{"approve":true}`), ErrInvalidMessage, "request_id is empty"},
		{"type mismatch", msg(TypeShutdownResponse, `{"type":"permission_response","request_id":"r","approve":true}`), ErrInvalidMessage, "payload says type"},
		{"bad decision", msg(TypePermissionResponse, `{"request_id":"r","decision":"maybe"}`), ErrInvalidMessage, "decision"},
		{"input not object", msg(TypePermissionRequest, `{"id":"q","workerId":"w","workerName":"w","teamName":"t","toolName":"Bash","toolUseId":"u","input":"rm -rf /"}`), ErrInvalidMessage, "input"},
		{"missing plan", msg(TypePlanApprovalRequest, `{"request_id":"p"}`), ErrInvalidMessage, "plan is empty"},
		{"wrong field type", msg(TypePlanApprovalResponse, `{"request_id":"p","approve":"yes"}`), ErrInvalidMessage, "approve"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.m.Payload()
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Payload error = %v, want %v", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not mention %q", err, tt.msg)
			}
		})
	}
}

func TestNewMessageRefusesInvalidPayload(t *testing.T) {
	_, err := NewMessage("a", "b", PermissionResponse{RequestID: "r", Decision: "yes"})
	if !errors.Is(err, ErrInvalidMessage) {
		t.Fatalf("NewMessage error = %v, want ErrInvalidMessage", err)
	}
	_, err = NewMessage("a", "b", ShutdownRequest{})
	if !errors.Is(err, ErrInvalidMessage) {
		t.Fatalf("NewMessage error = %v, want ErrInvalidMessage", err)
	}
}
