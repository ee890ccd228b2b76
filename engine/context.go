package engine

import "strings"

// ContextUsage is what the conversation's next request holds, part by
// part, in tokens estimated as the pre-send check estimates them (four
// bytes a token): the system prompt, the built-in tools' definitions, the
// MCP servers' tools' (named mcp__…), the messages; Window is the
// model's context window and LastInput the tokens of the last
// response, input and output, as the model counted them (0 before the first).
type ContextUsage struct {
	Model                             string
	System, Tools, MCPTools, Messages int64
	Window, LastInput                 int64
}

// ContextUsage measures the conversation now.
func (a *Conversation) ContextUsage() ContextUsage {
	a.mu.Lock()
	defer a.mu.Unlock()
	u := ContextUsage{Model: a.model, System: blocksTokens(a.cfg.System),
		Messages: messagesTokens(a.history), Window: a.cfg.Compaction.ContextWindow, LastInput: a.lastSeen}
	for _, d := range a.defs {
		n := int64(len(d.Name)+len(d.Description)+len(d.InputSchema)+blockOverhead) / bytesPerToken
		if strings.HasPrefix(d.Name, "mcp__") {
			u.MCPTools += n
		} else {
			u.Tools += n
		}
	}
	return u
}
