package llm

// StopReason says why the model stopped.
type StopReason string

// Stop reasons, as the Messages API names them.
const (
	StopEndTurn      StopReason = "end_turn"
	StopToolUse      StopReason = "tool_use"
	StopMaxTokens    StopReason = "max_tokens"
	StopSequence     StopReason = "stop_sequence"
	StopPauseTurn    StopReason = "pause_turn"
	StopRefusal      StopReason = "refusal"
	StopContextLimit StopReason = "model_context_window_exceeded"
)

// Usage counts tokens. InputTokens excludes the cached parts, as the
// Messages API reports it.
type Usage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens:              u.InputTokens + v.InputTokens,
		OutputTokens:             u.OutputTokens + v.OutputTokens,
		CacheCreationInputTokens: u.CacheCreationInputTokens + v.CacheCreationInputTokens,
		CacheReadInputTokens:     u.CacheReadInputTokens + v.CacheReadInputTokens,
	}
}

// TotalInput is every input token of the request, cached or not.
func (u Usage) TotalInput() int64 {
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

// Total is all input plus output tokens.
func (u Usage) Total() int64 { return u.TotalInput() + u.OutputTokens }

// Response is a complete assistant message.
type Response struct {
	ID         string     `json:"id"`
	Model      string     `json:"model"`
	Content    []Block    `json:"content"`
	StopReason StopReason `json:"stop_reason"`
	Usage      Usage      `json:"usage"`
	// RequestID is the provider's request id, for support and logs.
	RequestID string `json:"request_id,omitempty"`
}

// Message returns the response as an assistant message for the history.
func (r *Response) Message() Message {
	return Message{Role: RoleAssistant, Content: r.Content}
}
