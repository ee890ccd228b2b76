// Package fork builds what a fork sends: the
// parent's request messages, the parent's last assistant message with all
// its tool calls, one user message answering every call with the same
// placeholder, and last the boilerplate and the directive — so that sibling
// forks differ only in their final text block and read each other's prompt
// cache. It also places a fork's cache breakpoints. The runtime is its only
// user; none of this is API.
package fork

import (
	"strings"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/llm"
)

// Tag opens the boilerplate of every fork's directive; finding it in an
// agent's history marks the agent as a fork (the second recursion guard,
// besides the fork flag the runtime keeps).
const Tag = "<fork-boilerplate>"

// forkBoilerplate tells a fork what it is. It is the same for every fork,
// so it is part of what siblings share up to their directives.
const forkBoilerplate = Tag + `
You are a forked worker: a copy of the agent above, started to carry out one directive while the original continues. You are not the main agent and nobody will read your messages except your final report.
- Do not converse, ask questions or suggest next steps. Act.
- Use your tools directly. Do not write text between tool calls.
- Stay strictly within your directive; leave everything else to the main agent.
- If you change files, commit your changes and list the commit hashes in your report.
- The instructions above about replying to the user and waiting for agents are the main agent's, not yours; starting agents and messaging a team are refused to you.
- The tool calls above were started by the main agent, not by you; their results are not yours to wait for. To wait for a command you started in the background, end your turn: its notification wakes you.
- End with a report of at most 500 words that begins with "Scope:" (what you were asked to do), then what you did, what you found, and what is left: it is all the main agent receives.
</fork-boilerplate>

`

// forkPlaceholder answers every tool call of the parent's last message in a
// fork's history. It is identical for every call and every sibling.
const forkPlaceholder = "Started by the main agent; it handles this result."

// Messages returns a fork's history: the parent's request
// messages, the parent's assistant message with all its tool calls, and one
// user message answering each call with the same placeholder, followed by
// the boilerplate and the directive. Only the directive differs between
// siblings.
func Messages(base []llm.Message, assistant llm.Message, directive string) []llm.Message {
	msgs := llm.CloneMessages(base)
	msgs = append(msgs, assistant.Clone())
	var answer []llm.Block
	for _, u := range assistant.ToolUses() {
		answer = append(answer, llm.ToolResult(u.ID, forkPlaceholder, false))
	}
	answer = append(answer, llm.Text(forkBoilerplate+"Your directive: "+directive))
	return append(msgs, llm.Message{Role: llm.RoleUser, Content: answer})
}

// Markers places a fork's breakpoints: after the system prompt (whose
// prefix includes the tools), at the end of the parent's cached history, on
// the last placeholder (the end of what siblings share), and on the last
// block. Later turns of the fork use the default policy plus the shared one.
func Markers(parentLen int) func(req *llm.Request) {
	return func(req *llm.Request) {
		engine.ClearCacheMarkers(req)
		if n := len(req.System); n > 0 {
			req.System[n-1].Cache = true
		} else if n := engine.LastLoadedTool(req.Tools); n >= 0 {
			req.Tools[n].Cache = true
		}
		shared := parentLen + 1 // the placeholder message
		if len(req.Messages) == shared+1 {
			engine.MarkMessage(req, parentLen-1, -1)
			engine.MarkMessage(req, shared, len(req.Messages[shared].Content)-2)
		} else {
			engine.MarkMessage(req, shared, len(req.Messages[shared].Content)-2)
		}
		engine.MarkMessage(req, len(req.Messages)-1, -1)
	}
}

// In reports whether history holds a fork's boilerplate: the history of a
// fork (or of an agent resumed from one), which must not fork again.
func In(history []llm.Message) bool {
	for _, m := range history {
		if m.Role == llm.RoleUser && strings.Contains(m.TextContent(), Tag) {
			return true
		}
	}
	return false
}
