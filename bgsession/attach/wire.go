package attach

import (
	"encoding/json"

	"github.com/cohort-dev/cohort"
)

// call is a client's request.
type call struct {
	Seq      int              `json:"seq"`
	Op       string           `json:"op"`
	Text     string           `json:"text,omitempty"`
	ID       string           `json:"id,omitempty"`
	Decision *cohort.Decision `json:"decision,omitempty"`
	// Source is who asked for a model switch (op "model"; "sdk" when
	// empty).
	Source string `json:"source,omitempty"`
}

// wireEvent is a cohort.Event in its Go field names (a defined type
// drops Event's MarshalJSON, whose stream-json has no decoder).
type wireEvent cohort.Event

// message is what the server sends.
type message struct {
	Type  string `json:"type"`
	Seq   int    `json:"seq,omitempty"`
	Error string `json:"error,omitempty"`
	// hello
	SessionID string `json:"sessionId,omitempty"`
	Model     string `json:"model,omitempty"`
	Mode      string `json:"mode,omitempty"`
	// event
	Event *wireEvent `json:"event,omitempty"`
	// permission
	ID      string                    `json:"id,omitempty"`
	Request *cohort.PermissionRequest `json:"request,omitempty"`
	// agents
	Agents []cohort.AgentInfo `json:"agents,omitempty"`
}

func encode(m any) ([]byte, error) {
	data, err := json.Marshal(m)
	return append(data, '\n'), err
}
