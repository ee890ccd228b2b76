package llm

import (
	"encoding/json"
	"slices"
)

// ToolDef is a tool as the model sees it: a name, prose, and the JSON schema
// of its input.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`

	// NullAsAbsent are optional fields the tool reads as absent when the
	// model sends them null (the schema says nothing of it). Not sent.
	NullAsAbsent []string `json:"-"`

	// Defer offers the tool on demand: it stays in the array, but the model
	// does not see its definition (and the API bills none of it) until a
	// tool_reference block in a tool_result names it (BlockToolReference).
	// The array and so the cached prefix are the same bytes before and
	// after; the definition is read where the reference sits. Providers
	// without the feature emulate it (llm/openai). A deferred tool never
	// carries a cache marker, and at least one tool is not deferred.
	Defer bool `json:"-"`

	// Cache marks a prompt-cache breakpoint after this tool (normally the last
	// one). Set per request, never persisted.
	Cache bool `json:"-"`

	// WebSearch, when set, makes this the provider's server-side web search
	// tool instead of a tool the caller runs: the provider searches and the
	// response carries BlockServerToolUse and BlockWebSearchResult blocks.
	// Description and InputSchema are then unused. Providers without one
	// refuse the request.
	WebSearch *WebSearchTool `json:"-"`
}

// WebSearchTool configures the server-side web search. AllowedDomains and
// BlockedDomains are mutually exclusive; MaxUses bounds the searches in one
// response (0 leaves the provider's default).
type WebSearchTool struct {
	MaxUses        int
	AllowedDomains []string
	BlockedDomains []string
}

// Thinking configures extended thinking. A nil *Thinking means off.
type Thinking struct {
	// BudgetTokens enables thinking with a fixed budget (≥ 1024). Zero with
	// Adaptive set lets the model decide.
	BudgetTokens int  `json:"budget_tokens,omitempty"`
	Adaptive     bool `json:"adaptive,omitempty"`
}

// Request is one call to a model. Builders must produce it deterministically:
// the same inputs give the same bytes on the wire, which prompt caching needs.
type Request struct {
	Model     string
	System    []Block // text blocks
	Tools     []ToolDef
	Messages  []Message
	MaxTokens int
	Thinking  *Thinking
	// Effort is the output effort level ("low", "medium", "high", "xhigh",
	// "max"); empty leaves the provider default.
	Effort      string
	Temperature *float64
	StopSeqs    []string

	// Background marks a request made for a background agent; providers use
	// it to skip retries that only make sense while a user waits (529).
	Background bool
}

// Breakpoints counts the cache markers set in r.
func (r *Request) Breakpoints() int {
	n := 0
	for _, t := range r.Tools {
		if t.Cache {
			n++
		}
	}
	for _, b := range r.System {
		if b.Cache {
			n++
		}
	}
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if b.Cache {
				n++
			}
		}
	}
	return n
}

// LoadedTools returns the deferred tools msgs have loaded: the names of
// the tool_reference blocks in their tool results, each once, in the order
// they first appear.
func LoadedTools(msgs []Message) []string {
	var names []string
	for _, m := range msgs {
		if m.Role != RoleUser {
			continue
		}
		for _, b := range m.Content {
			if b.Type != BlockToolResult {
				continue
			}
			for _, c := range b.Content {
				if c.Type == BlockToolReference && !slices.Contains(names, c.Name) {
					names = append(names, c.Name)
				}
			}
		}
	}
	return names
}
