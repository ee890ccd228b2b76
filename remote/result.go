package remote

import (
	"encoding/json"
	"fmt"
)

// Status is how a job ended.
type Status string

// Job outcomes. A refused job never ran: its signature, its settings or
// its payload were not acceptable to the worker.
const (
	StatusCompleted Status = "completed"
	StatusFailed    Status = "failed"
	StatusRefused   Status = "refused"
	StatusCancelled Status = "cancelled"
)

// Result is what a worker publishes when a job ends, signed with its key
// (Signer.SealResult); a lead takes the first one that passes
// OpenResult.
type Result struct {
	JobID  string `json:"job_id"`
	Status Status `json:"status"`
	// Text is the agent's final message; Error why it failed or was
	// refused.
	Text  string `json:"text,omitempty"`
	Error string `json:"error,omitempty"`
	// Capped lists what the worker's policy lowered.
	Capped []string `json:"capped,omitempty"`
	Usage  Usage    `json:"usage"`
	// Patch is the agent's work: git format-patch output against the
	// job's base commit, its uncommitted changes committed last. Empty
	// when the agent changed nothing.
	Patch []byte `json:"patch,omitempty"`
	// Worker names the worker that ran the job.
	Worker string `json:"worker,omitempty"`
	// Signature is the lead's signature on the envelope of the job this
	// result answers (in a refusal of a job whose signature did not
	// verify, the refused envelope's): the lead that signed that very
	// envelope knows it is its own job's result, not an older job's with
	// the same id (OpenResult). The worker's own signature is on the
	// Envelope the result travels in.
	Signature []byte `json:"signature,omitempty"`
	// Refused is, in a refusal of a job whose signature did not verify,
	// the sha256 of the exact message refused: its quoted signature is
	// only what the message carried (an attacker may copy the lead's
	// onto an altered or relabelled payload), so the lead takes the
	// refusal only if these are the bytes it published (Client.open).
	Refused []byte `json:"refused,omitempty"`
}

// Usage is what the job's agent used.
type Usage struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	TotalTokens  int64 `json:"total_tokens"`
	ToolUses     int   `json:"tool_uses"`
	Turns        int   `json:"turns"`
	DurationMs   int64 `json:"duration_ms"`
	// CostUSD is what the agent's model requests cost, which the lead
	// charges to its spend caps.
	CostUSD float64 `json:"cost_usd,omitempty"`
}

// Progress is one step of a running job, published as it happens (core
// NATS, not stored: a lead that misses one sees the next).
type Progress struct {
	JobID  string `json:"job_id"`
	Worker string `json:"worker,omitempty"`
	// Phase is "running" in the event a worker sends when it starts the
	// job (until then the job waits in the queue).
	Phase string `json:"phase,omitempty"`
	// Tool and Description name a tool call the agent made.
	Tool        string `json:"tool,omitempty"`
	Description string `json:"description,omitempty"`
	// InputTokens is the latest request's input; OutputTokens and
	// ToolUses are totals so far.
	InputTokens  int64 `json:"input_tokens,omitempty"`
	OutputTokens int64 `json:"output_tokens,omitempty"`
	ToolUses     int   `json:"tool_uses,omitempty"`
}

// DecodeResult reads a result strictly.
func DecodeResult(data []byte) (*Result, error) {
	var r Result
	if err := decodeStrict(data, &r); err != nil {
		return nil, fmt.Errorf("remote: result does not decode: %w", err)
	}
	return &r, nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain structs are marshalled
	}
	return b
}
