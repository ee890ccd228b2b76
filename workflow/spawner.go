package workflow

import (
	"context"
	"encoding/json"
)

// Spawner starts one subagent for an agent() call and waits for its final
// answer. The wiring layer implements it on the one spawn path every
// background agent takes, so the sandbox, permissions, hooks, worktree
// isolation and cost accounting apply to workflow agents unchanged.
//
// Spawn is called from many goroutines at once (at most Config.Concurrency
// at a time) and must be safe for concurrent use. It returns when the agent
// has finished or ctx is done.
type Spawner interface {
	Spawn(ctx context.Context, req AgentRequest) (AgentResult, error)
}

// AgentRequest is one agent() call's inputs.
type AgentRequest struct {
	Prompt    string          `json:"prompt"`
	Label     string          `json:"label,omitempty"`
	Phase     string          `json:"phase,omitempty"`
	Schema    json.RawMessage `json:"schema,omitempty"`
	Model     string          `json:"model,omitempty"`
	Effort    string          `json:"effort,omitempty"`
	Isolation string          `json:"isolation,omitempty"`
	AgentType string          `json:"agentType,omitempty"`
}

// AgentResult is a finished subagent: its final text and what it cost.
type AgentResult struct {
	Text string
	Cost float64 // USD, counted against the run's budget
}
