package teammate

import (
	"bytes"
	"encoding/json"
)

// Body is SendMessage's message: text, or a protocol message as an object
// in Claude Code 2.1.332's shape — {type: "shutdown_request", reason?},
// {type: "shutdown_response", request_id, approve, reason?},
// {type: "plan_approval_response", request_id, approve, feedback?}. It
// decodes whatever the model sent and keeps what it could not read for
// the call's error, which then shows the shape expected.
type Body struct {
	Text  string
	Typed *Protocol
	// bad describes a message that is neither text nor an object.
	bad string
}

// Protocol is a typed message's fields.
type Protocol struct {
	Type      string `json:"type"`
	RequestID string `json:"request_id,omitempty"`
	Approve   *bool  `json:"approve,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Feedback  string `json:"feedback,omitempty"`
}

// UnmarshalJSON reads text or an object; it never fails, so that the tool
// answers a malformed message itself.
func (b *Body) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	switch {
	case len(data) > 0 && data[0] == '"':
		return json.Unmarshal(data, &b.Text)
	case len(data) > 0 && data[0] == '{':
		var p Protocol
		if err := json.Unmarshal(data, &p); err != nil {
			b.bad = "message is an object whose fields cannot be read (" + err.Error() + ")"
			return nil
		}
		b.Typed = &p
	case string(data) == "null":
	default:
		b.bad = "message must be text or an object with a type"
	}
	return nil
}

// MarshalJSON writes the text, or the object.
func (b Body) MarshalJSON() ([]byte, error) {
	if b.Typed != nil {
		return json.Marshal(b.Typed)
	}
	return json.Marshal(b.Text)
}

// Shapes of the typed messages, for the model when it gets one wrong.
const (
	shutdownRequestShape  = `{"type": "shutdown_request", "reason": "why (optional)"}`
	shutdownResponseShape = `{"type": "shutdown_response", "request_id": "<the request's id>", "approve": true}, or approve false with a "reason" to keep working`
	planResponseShape     = `{"type": "plan_approval_response", "request_id": "<the request's id>", "approve": true or false, "feedback": "what to change (optional)"}`
)
