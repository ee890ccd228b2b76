package transcript

import (
	"time"

	"github.com/cohort-dev/cohort/llm"
)

// Entry types and subtypes.
const (
	TypeUser      = "user"
	TypeAssistant = "assistant"
	TypeSystem    = "system"

	SubtypeInit            = "init"
	SubtypeCompactBoundary = "compact_boundary"
)

// Origins of user-role messages that did not come from the user.
const (
	OriginToolResult     = "tool_result"
	OriginNotification   = "task_notification"
	OriginTeammate       = "teammate_message"
	OriginCompactSummary = "compact_summary"
	OriginSystem         = "system"
)

// Entry is one transcript line.
type Entry struct {
	Type        string    `json:"type"`
	Subtype     string    `json:"subtype,omitempty"`
	UUID        string    `json:"uuid"`
	ParentUUID  string    `json:"parentUuid,omitempty"`
	SessionID   string    `json:"sessionId"`
	AgentID     string    `json:"agentId,omitempty"`
	IsSidechain bool      `json:"isSidechain,omitempty"`
	Timestamp   time.Time `json:"timestamp"`
	Cwd         string    `json:"cwd,omitempty"`

	Message *llm.Message `json:"message,omitempty"`
	// Origin says where a user-role message came from; empty means the user.
	Origin string `json:"origin,omitempty"`
	// From is the sender of a teammate's message (origin
	// teammate_message).
	From      string     `json:"from,omitempty"`
	Usage     *llm.Usage `json:"usage,omitempty"`
	Model     string     `json:"model,omitempty"`
	RequestID string     `json:"requestId,omitempty"`

	// System and Tools are set on the init entry.
	System []llm.Block `json:"system,omitempty"`
	Tools  []string    `json:"tools,omitempty"`
	// Content is free text for system entries (a compaction's note).
	Content string `json:"content,omitempty"`
}
