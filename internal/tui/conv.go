package tui

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/internal/clip"
	"github.com/cohort-dev/cohort/llm"
)

// Limits that keep a transcript's memory and drawing bounded whatever the
// model sends: a 10 MB stream keeps its last maxEntryText bytes on screen.
const (
	maxEntries   = 400
	maxEntryText = 64 << 10
	resultLines  = 20 // lines of a tool result shown when expanded
)

type entryKind int

const (
	entryUser entryKind = iota
	entryText
	entryTool
	entryNote
	entryError
)

// entry is one thing in a transcript: a prompt, the model's text, a tool
// call with its result, a note.
type entry struct {
	kind   entryKind
	text   string // cleaned; for a tool call, its one-line summary
	result string // a tool call's result, cleaned
	isErr  bool
	done   bool // a tool call has its result
	cut    int  // bytes of text dropped from the front
	// lines caches the drawing at width w (expanded or not).
	lines    []string
	w        int
	expanded bool
}

// transcript is one agent's conversation as the UI shows it.
type transcript struct {
	entries []*entry
	tools   map[string]*entry // tool calls awaiting results, by tool_use id
	stream  *entry            // the text streaming in, if any
	dropped int               // entries dropped from the front
}

func newTranscript() *transcript { return &transcript{tools: map[string]*entry{}} }

func (t *transcript) add(e *entry) {
	t.entries = append(t.entries, e)
	if len(t.entries) > maxEntries {
		n := len(t.entries) - maxEntries
		t.dropped += n
		t.entries = append(t.entries[:0:0], t.entries[n:]...)
	}
}

func (t *transcript) note(kind entryKind, text string) {
	t.add(&entry{kind: kind, text: Clean(text, true)})
}

// event folds one event of this agent into the transcript.
func (t *transcript) event(ev cohort.Event) {
	switch ev.Type {
	case cohort.EventStream:
		t.delta(ev.Stream)
	case cohort.EventAssistant:
		if ev.Message == nil {
			return
		}
		// The streamed text was a draft of the message's text blocks: the
		// message replaces it.
		if t.stream != nil {
			for i, e := range t.entries {
				if e == t.stream {
					t.entries = append(t.entries[:i], t.entries[i+1:]...)
					break
				}
			}
			t.stream = nil
		}
		for _, b := range ev.Message.Content {
			switch b.Type {
			case llm.BlockText:
				if strings.TrimSpace(b.Text) != "" {
					t.add(clipped(entryText, b.Text))
				}
			case llm.BlockToolUse:
				e := &entry{kind: entryTool, text: toolSummary(b.Name, b.Input)}
				t.tools[b.ID] = e
				t.add(e)
			}
		}
	case cohort.EventUser:
		if ev.Message == nil {
			return
		}
		for _, b := range ev.Message.Content {
			switch b.Type {
			case llm.BlockToolResult:
				if e, ok := t.tools[b.ToolUseID]; ok {
					delete(t.tools, b.ToolUseID)
					e.result = Clean(clip.Prefix(resultText(b), maxEntryText), true)
					if strings.HasPrefix(e.result, userStopped) {
						// Said to the model; the user sees one interrupt line.
						e.result = "stopped"
					}
					e.isErr, e.done, e.lines = b.IsError, true, nil
				}
			case llm.BlockText:
				if s, ok := noticeLine(b.Text); ok && s != "" {
					t.add(clipped(entryNote, s))
				}
			}
		}
	}
}

// delta appends streamed text to the draft entry (w == -1 marks a draft).
func (t *transcript) delta(s *llm.Event) {
	if s == nil || s.Type != llm.EventDelta || s.DeltaKind != llm.DeltaText {
		return
	}
	if t.stream == nil {
		t.stream = &entry{kind: entryText, w: -1}
		t.add(t.stream)
	}
	e := t.stream
	e.text += Clean(s.Delta, true)
	if len(e.text) > 2*maxEntryText {
		drop := len(e.text) - maxEntryText
		for drop < len(e.text) && !isRuneStart(e.text[drop]) {
			drop++
		}
		e.cut += drop
		e.text = e.text[drop:]
	}
	e.lines = nil
}

// userStopped opens the result of a call the user's interrupt cut short.
const userStopped = "Interrupted by the user:"

func isRuneStart(b byte) bool { return b&0xc0 != 0x80 }

func clipped(kind entryKind, s string) *entry {
	e := &entry{kind: kind}
	if len(s) > maxEntryText {
		e.cut = len(s) - maxEntryText
		s = s[e.cut:]
		for len(s) > 0 && !isRuneStart(s[0]) {
			s = s[1:]
		}
	}
	e.text = Clean(s, true)
	return e
}

func resultText(b llm.Block) string {
	var parts []string
	for _, c := range b.Content {
		switch c.Type {
		case llm.BlockText:
			parts = append(parts, c.Text)
		case llm.BlockImage:
			parts = append(parts, "[image]")
		}
	}
	if len(parts) == 0 {
		return b.Text
	}
	return strings.Join(parts, "\n")
}

// summaryKeys are the input fields a call's one-line summary may show,
// the first one present winning: what the call acts on comes first (a
// search's pattern before where it looks, a task's subject before its
// description), so Grep, TaskCreate and TeamDelete never read as empty.
var summaryKeys = []string{"command", "file_path", "notebook_path", "pattern", "path", "url", "query", "subject",
	"description", "prompt", "recipient", "to", "team_name"}

// toolSummary is a tool call in one line: Bash(go test ./...), and for the
// task-list tools the task and what changes: TaskUpdate(#2 completed).
func toolSummary(name string, input json.RawMessage) string {
	var in map[string]any
	_ = json.Unmarshal(input, &in)
	arg := ""
	for _, k := range summaryKeys {
		if v, ok := in[k].(string); ok && v != "" {
			arg = v
			break
		}
	}
	if id, ok := in["taskId"].(string); ok && id != "" {
		arg = "#" + id
		for _, k := range []string{"status", "owner"} {
			if v, ok := in[k].(string); ok && v != "" {
				arg += " " + k + " " + v
			}
		}
	}
	return Clean(clip.Runes(name, 60), false) + "(" + Clean(clip.Runes(firstLine(arg), 200), false) + ")"
}

// firstSentence is what a collapsed result shows of its first line: all
// of it when it fits in room, else its first sentence when that fits, so
// a background agent's result reads "The agent is running in the
// background (agentId: a1). …" rather than the instructions to the model
// that follow, cut at the edge (ctrl+o shows all).
func firstSentence(line string, room int) string {
	if ansi.StringWidth(line) <= room {
		return line
	}
	if i := strings.Index(line, ". "); i > 0 && ansi.StringWidth(line[:i+1]) <= room {
		return line[:i+1] + " …"
	}
	return line
}

// teamText is a team message in words for the conversation: a protocol
// message (a JSON object with a type) as what it asks or answers, never
// its JSON with request ids; anything else its first line.
func teamText(s string) string {
	var p struct {
		Type     string `json:"type"`
		Reason   string `json:"reason"`
		Feedback string `json:"feedback"`
		Approve  *bool  `json:"approve"`
	}
	if !strings.HasPrefix(strings.TrimSpace(s), "{") || json.Unmarshal([]byte(s), &p) != nil {
		return firstLine(s)
	}
	verdict := "declined"
	if p.Approve != nil && *p.Approve {
		verdict = "approved"
	}
	var out string
	switch p.Type {
	case "shutdown_request":
		out = "asks to shut down"
	case "shutdown_response":
		out = verdict + " the shutdown request"
	case "plan_approval_response":
		out = strings.Replace(verdict, "declined", "rejected", 1) + " the plan"
	default:
		return firstLine(s)
	}
	if why := firstLine(p.Reason + p.Feedback); why != "" {
		out += ": " + why
	}
	return out
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// draw renders the entry at width.
func (e *entry) draw(width int, expanded bool, st styles) []string {
	if e.lines != nil && e.w == width && e.expanded == expanded {
		return e.lines
	}
	var out []string
	switch e.kind {
	case entryUser:
		for _, l := range wrap("> "+e.text, width) {
			out = append(out, st.user.Render(l))
		}
	case entryText:
		if e.cut > 0 {
			out = append(out, st.dim.Render(cut(fmt.Sprintf("… %s earlier not shown", bytesText(e.cut)), width)))
		}
		out = append(out, markdown(e.text, "● ", width)...)
	case entryTool:
		out = append(out, st.tool.Render(cut("◆ "+e.text, width)))
		out = append(out, e.drawResult(width, expanded, st)...)
	case entryNote:
		for _, l := range wrap("· "+e.text, width) {
			out = append(out, st.dim.Render(l))
		}
	case entryError:
		for _, l := range wrap("✗ "+e.text, width) {
			out = append(out, st.errText.Render(l))
		}
	}
	if e.w != -1 {
		e.w = width
	}
	e.lines, e.expanded = out, expanded
	return out
}

func (e *entry) drawResult(width int, expanded bool, st styles) []string {
	if !e.done {
		return []string{st.dim.Render(cut("  └ running…", width))}
	}
	lines := strings.Split(strings.TrimRight(e.result, "\n"), "\n")
	style := st.dim
	if e.isErr {
		style = st.errText
	}
	if !expanded {
		room := width - 4
		if len(lines) > 1 {
			room = max(width-16, 8)
		}
		s := "  └ " + firstSentence(lines[0], room-4)
		if len(lines) > 1 {
			s = cut(s, max(width-16, 8)) + fmt.Sprintf(" (+%d lines)", len(lines)-1)
		}
		return []string{style.Render(cut(s, width))}
	}
	var out []string
	for i, l := range lines {
		if i == resultLines {
			out = append(out, style.Render(cut(fmt.Sprintf("    … %d more lines", len(lines)-i), width)))
			break
		}
		prefix := "    "
		if i == 0 {
			prefix = "  └ "
		}
		out = append(out, style.Render(cut(prefix+l, width)))
	}
	return out
}

func bytesText(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// tail returns the transcript's last height lines at width, drawing only
// the entries it needs.
func (t *transcript) tail(width, height int, expanded bool, st styles) []string {
	if height <= 0 {
		return nil
	}
	var rev [][]string
	n := 0
	for i := len(t.entries) - 1; i >= 0 && n < height; i-- {
		l := t.entries[i].draw(width, expanded, st)
		rev = append(rev, l)
		n += len(l)
	}
	out := make([]string, 0, n)
	for i := len(rev) - 1; i >= 0; i-- {
		out = append(out, rev[i]...)
	}
	if len(out) > height {
		out = out[len(out)-height:]
	}
	return out
}
