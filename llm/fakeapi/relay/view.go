package relay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cohort-dev/cohort/internal/clip"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// view renders request e: a header, for a new agent its system prompt and
// tools, then the messages new since the agent's last answer, then how to
// answer. The caller holds the relay's lock (the tool book changes).
func (r *Relay) view(e *entry, pl placement) string {
	var w strings.Builder
	req, c := e.req, e.conv
	fmt.Fprintf(&w, "# Request %d: %s, turn %d\n\n", e.n, c.name(), req.Turn())
	fmt.Fprintf(&w, "Model %s, max_tokens %d", req.Model, req.MaxTokens)
	if len(req.Thinking) > 0 {
		fmt.Fprintf(&w, ", thinking %s", compactJSON(req.Thinking))
	}
	if req.API != "" && req.API != fakeapi.APIMessages {
		fmt.Fprintf(&w, ", %s protocol", req.API)
	}
	if req.Attempt > 1 {
		fmt.Fprintf(&w, ", attempt %d (the client sent this exact request before)", req.Attempt)
	}
	w.WriteString(".\n")
	if pl.isNew {
		fmt.Fprintf(&w, "A new agent: %s.\n", c.label)
	} else if c.answered() > 0 {
		fmt.Fprintf(&w, "%s continues after your answer to request %d.\n", c.label, c.answered())
	}
	for _, n := range pl.notes {
		w.WriteString(n + "\n")
	}
	defs := toolDefs(req.Tools)
	if pl.isNew {
		r.writeSystem(&w, c, req.System)
	}
	var prev []toolDef
	if !pl.isNew {
		prev = c.tools
		if prev == nil {
			prev = []toolDef{}
		}
	}
	var tools strings.Builder
	if r.book.describe(&tools, c.label, defs, prev) {
		w.WriteString("\n## Tools\n\n")
		w.WriteString(tools.String())
	}
	c.system, c.tools = req.System, defs

	if pl.isNew && pl.from == 0 {
		w.WriteString("\n## Messages\n")
	} else {
		fmt.Fprintf(&w, "\n## New since your last answer\n")
	}
	writeMessages(&w, req.Messages, pl.from)
	fmt.Fprintf(&w, "\n---\nAnswer in %s: text as it is, each tool call as a fenced block\n```tool NAME\n<input in YAML or JSON>\n```\n", answerName(e.n))
	return w.String()
}

// writeSystem writes a new agent's system prompt, or which agent's it
// equals.
func (r *Relay) writeSystem(w *strings.Builder, c *conv, system []fakeapi.Block) {
	w.WriteString("\n## System prompt\n\n")
	text := systemText(system)
	for _, o := range r.convs {
		if o != c && o.system != nil && systemText(o.system) == text {
			fmt.Fprintf(w, "The same as %s's (request %d).\n", o.label, o.first)
			return
		}
	}
	if len(system) == 0 {
		w.WriteString("None.\n")
		return
	}
	for i, b := range system {
		if len(system) > 1 {
			fmt.Fprintf(w, "Block %d of %d:\n\n", i+1, len(system))
		}
		fenced(w, "text", b.Text)
	}
}

// writeMessages writes msgs[from:], naming the call each tool result
// answers (calls are looked up in all of msgs).
func writeMessages(w *strings.Builder, msgs []fakeapi.Message, from int) {
	calls := map[string]fakeapi.Block{}
	for _, m := range msgs {
		for _, b := range m.Content {
			if b.Type == "tool_use" || b.Type == "server_tool_use" {
				calls[b.ID] = b
			}
		}
	}
	if from >= len(msgs) {
		w.WriteString("\nNothing new.\n")
		return
	}
	for i := from; i < len(msgs); i++ {
		m := msgs[i]
		fmt.Fprintf(w, "\n### %s (message %d)\n", m.Role, i+1)
		for _, b := range m.Content {
			writeBlock(w, b, m.Role, i == 0, calls)
		}
	}
}

// writeBlock writes one message block with a line that says what it is.
func writeBlock(w *strings.Builder, b fakeapi.Block, role string, first bool, calls map[string]fakeapi.Block) {
	switch b.Type {
	case "text":
		fmt.Fprintf(w, "\n**%s**\n\n", textKind(b.Text, role, first))
		fenced(w, "", b.Text)
	case "tool_result":
		head := "tool result"
		if b.IsError {
			head = "tool result, an error"
		}
		call, ok := calls[b.ToolUseID]
		if ok {
			fmt.Fprintf(w, "\n**%s** for %s `%s`: %s\n\n", head, call.Name, b.ToolUseID, clip.Runes(compactJSON(call.Input), 160))
		} else {
			fmt.Fprintf(w, "\n**%s** for `%s`\n\n", head, b.ToolUseID)
		}
		fenced(w, "", resultText(b.Content))
	case "tool_use", "server_tool_use":
		fmt.Fprintf(w, "\n**%s** %s `%s`\n\n", strings.ReplaceAll(b.Type, "_", " "), b.Name, b.ID)
		fenced(w, "json", indentJSON(b.Input))
	case "thinking":
		w.WriteString("\n**thinking**\n\n")
		fenced(w, "", b.Thinking)
	default:
		fmt.Fprintf(w, "\n**%s** (not shown)\n", b.Type)
	}
}

// textKind names a user text block by what it carries: the prompt, a
// notification, a teammate's message, or text the user typed.
func textKind(text, role string, first bool) string {
	t := strings.TrimSpace(text)
	switch {
	case role != "user":
		return "text"
	case strings.HasPrefix(t, "<system-reminder>"):
		return "system reminder"
	case first:
		return "prompt"
	case strings.HasPrefix(t, "<task-notification>"):
		return "notification"
	case strings.HasPrefix(t, "<teammate-message"):
		return "teammate message"
	}
	return "user text"
}

func systemText(blocks []fakeapi.Block) string {
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func resultText(blocks []fakeapi.Block) string {
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		} else {
			parts = append(parts, "["+b.Type+"]")
		}
	}
	return strings.Join(parts, "\n")
}

// fenced writes text in a fence longer than any run of backticks in it.
func fenced(w *strings.Builder, lang, text string) {
	longest, run := 0, 0
	for i := 0; i < len(text); i++ {
		if text[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", max(3, longest+1))
	w.WriteString(f + lang + "\n" + strings.TrimRight(text, "\n") + "\n" + f + "\n")
}

func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func indentJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}
