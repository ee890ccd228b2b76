package tui

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/llm"
)

// hostile is what a tool or a model may print: a title change, a screen
// clear, a clipboard write, cursor moves, a bell, a bidi override, bytes
// that are not UTF-8.
const hostile = "ok\x1b]0;pwned\x07\x1b[2J\x1b[H\x1b]52;c;ZXZpbA==\x1b\\\x1b[31mred\x1b[0m\a\r\u202eevil\xff\x00end"

// allowed are the only sequences the painter may send: cursor position,
// erase line or screen, styles, the modes it sets and resets.
var allowed = regexp.MustCompile(`\x1b\[(\d+;\d+H|H|2K|2J|[0-9;:]*m|\?(1049|25|1004|2004|2026)[hl])`)

// checkFrame fails unless every line fits w cells and the frame h lines,
// and no escape but the UI's own styles is in it.
func checkFrame(t *testing.T, frame string, w, h int) {
	t.Helper()
	lines := strings.Split(frame, "\n")
	if len(lines) > h {
		t.Errorf("the frame has %d lines for a terminal of %d", len(lines), h)
	}
	for i, l := range lines {
		if n := ansi.StringWidth(l); n > w {
			t.Errorf("line %d is %d cells wide on a terminal of %d: %q", i, n, w, l)
		}
		rest := allowed.ReplaceAllString(l, "")
		if strings.ContainsAny(rest, "\x1b\a\r\x00\u009b\u202e") || !utf8Valid(rest) {
			t.Errorf("line %d lets a control through: %q", i, rest)
		}
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "") == s }

// hostileModel is a model on the crowd with hostile text everywhere:
// agent names and descriptions, a 200,000-line tool result, a prompt.
func hostileModel(t *testing.T, w, h int) *Model {
	t.Helper()
	start := time.Now()
	c := newCrowd(30, start)
	c.agents[1].Description = hostile
	c.agents[2].Name, c.agents[2].Kind = hostile, hostile
	c.agents[3].Activities = []cohort.Activity{{Tool: hostile, Description: hostile}}
	m := newModel(Options{Session: c, Now: func() time.Time { return start }})
	m.width, m.high = w, h
	m.tree.set(c.Agents())
	m.chat.add(&entry{kind: entryUser, text: Clean(hostile, true)})
	long := strings.Repeat(hostile+"\n", 200_000)
	m.event(cohort.Event{Type: cohort.EventAssistant, Message: &cohort.Message{Role: llm.RoleAssistant, Content: []llm.Block{
		{Type: llm.BlockText, Text: hostile},
		{Type: llm.BlockToolUse, ID: "t1", Name: "Bash" + hostile, Input: []byte(`{"command": "cat \u001b[2J evil"}`)}}}})
	m.event(cohort.Event{Type: cohort.EventUser, Message: &cohort.Message{Role: llm.RoleUser, Content: []llm.Block{
		{Type: llm.BlockToolResult, ToolUseID: "t1", Content: []llm.Block{{Type: llm.BlockText, Text: long}}}}}})
	return m
}

// TestBadInputKeepsTheLayout: hostile text in every field, on terminals
// down to 20×5, in the conversation, expanded results, the tree and a
// permission dialog: every frame fits and carries no escape of its own.
func TestBadInputKeepsTheLayout(t *testing.T) {
	for _, size := range [][2]int{{20, 5}, {80, 24}, {200, 60}, {1, 1}} {
		w, h := size[0], size[1]
		m := hostileModel(t, w, h)
		checkFrame(t, m.frame(), w, h)
		m.expanded = true
		checkFrame(t, m.frame(), w, h)
		m.screen = screenTree
		checkFrame(t, m.frame(), w, h)
		for range 5 {
			m.tree.move(1)
			checkFrame(t, m.frame(), w, h)
		}
		m.dialog = newPermissionDialog(permissionMsg{req: cohort.PermissionRequest{Tool: hostile, AgentName: hostile, Blocked: []string{hostile}, Unsandboxed: true,
			AgentKind: "teammate", Reason: strings.Repeat(hostile, 100), Input: []byte(`{"command":"` + strings.Repeat("x", 5000) + `"}`)},
			reply: make(chan cohort.Decision, 1)}, nil, hostile)
		checkFrame(t, m.frame(), w, h)
		m.input.insert(strings.Repeat("typed "+hostile, 500))
		m.dialog = nil
		checkFrame(t, m.frame(), w, h)
	}
}

// TestTenMegabyteStream: a model that streams 10 MB keeps a bounded entry
// (its end on screen, a line saying how much came before) and a frame
// that fits.
func TestTenMegabyteStream(t *testing.T) {
	m := hostileModel(t, 80, 24)
	chunk := strings.Repeat("streamed text with \x1b[1mescapes\x1b[0m and a newline\n", 20) // ~1 KB
	total, shown := 0, 0
	for total < 10<<20 {
		m.event(cohort.Event{Type: cohort.EventStream, Stream: &llm.Event{Type: llm.EventDelta, DeltaKind: llm.DeltaText, Delta: chunk}})
		total += len(chunk)
		shown += len(Clean(chunk, true))
	}
	e := m.chat.stream
	if e == nil || len(e.text) > 2*maxEntryText || e.cut+len(e.text) != shown {
		t.Fatalf("the streamed entry holds %d bytes and says %d were cut, of %d", len(e.text), e.cut, shown)
	}
	frame := m.frame()
	checkFrame(t, frame, 80, 24)
	if !strings.Contains(ansi.Strip(frame), "streamed text with escapes and a newline") {
		t.Errorf("the frame does not show the stream's end:\n%s", frame)
	}
	// The message that the stream drafted replaces the draft.
	m.event(cohort.Event{Type: cohort.EventAssistant, Message: &cohort.Message{Role: llm.RoleAssistant,
		Content: []llm.Block{{Type: llm.BlockText, Text: "final answer"}}}})
	if m.chat.stream != nil || !strings.Contains(ansi.Strip(m.frame()), "final answer") {
		t.Errorf("the final message did not replace the streamed draft")
	}
	for _, en := range m.chat.entries {
		if len(en.text) > 2*maxEntryText {
			t.Errorf("an entry holds %d bytes", len(en.text))
		}
	}
}

// TestPainterSendsOnlyItsOwnSequences: what the painter writes for the
// hostile frames holds no escape but cursor moves, erases, styles and its
// modes; and a frame equal to the last one writes nothing.
func TestPainterSendsOnlyItsOwnSequences(t *testing.T) {
	var out syncBuffer
	p := newPainter(&out, colorprofile.ANSI256)
	m := hostileModel(t, 40, 12)
	m.paint = p
	m.View()
	m.screen = screenTree
	m.View()
	p.stop()
	rest := allowed.ReplaceAllString(out.String(), "")
	if strings.ContainsAny(rest, "\x1b\a\r\x00") {
		t.Fatalf("the painter let a control through: %q", rest)
	}

	var again syncBuffer
	q := newPainter(&again, colorprofile.ANSI256)
	q.set("same\nframe", 10, 2)
	q.stop()
	n := again.Len()
	q2 := &painter{out: &again, profile: colorprofile.ANSI256, have: q.have, hw: q.hw, want: q.want, w: 10, h: 2}
	q2.paint()
	if again.Len() != n {
		t.Errorf("an unchanged frame wrote %q", again.String()[n:])
	}
}

// syncBuffer is a bytes.Buffer the painter's goroutine and the test share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *syncBuffer) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Len()
}
