package tui

import (
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// reply is Markdown as a model writes it.
const markdownReply = "## Findings\n\nThe matcher is **fast** and *mostly* right; `Match` handles `*` and snake_case_names stay.\n\n" +
	"- first point\n- a second point long enough to wrap past the width of this terminal, so that its next line hangs under the text\n" +
	"  1. a nested step\n\n```go\nfunc main() {\n\tprintln(\"hi\")\n}\n```\n\n> a quoted line\n\nSee [the docs](https://example.com/docs).\n\n---\nDone."

// TestMarkdownInTheConversation (issue 43 item 13): the model's Markdown
// is drawn — fences gone and the code indented, bullets with a hanging
// indent, emphasis and code marks replaced by their styles, links as text
// with the address after it.
func TestMarkdownInTheConversation(t *testing.T) {
	w := newWorld(t, worldConfig{width: 80, height: 30}, func(r *fakeapi.Request) fakeapi.Reply {
		return fakeapi.TextReply(markdownReply)
	})
	w.waitFor("default mode")
	w.typeText("what did you find")
	w.key("enter")
	scr := w.waitFor("Done.", "done in")
	w.golden("markdown-reply", scr)
	for _, raw := range []string{"```", "**fast**", "*mostly*", "`Match`", "## Findings", "[the docs]", "- first point"} {
		if strings.Contains(scr, raw) {
			t.Errorf("the frame shows the Markdown mark %q:\n%s", raw, scr)
		}
	}
	for _, want := range []string{"● Findings", "• first point", "snake_case_names", "  func main() {", "the docs (https://example.com/docs)", "│ a quoted line"} {
		if !strings.Contains(scr, want) {
			t.Errorf("the frame lacks %q:\n%s", want, scr)
		}
	}
	// The styles are on the cells: bold, italic, the code colour.
	w.term.mu.Lock()
	defer w.term.mu.Unlock()
	for _, c := range []struct {
		text string
		ok   func(row, col int) bool
	}{
		{"fast", func(r, c int) bool { return w.term.emu.CellAt(c, r).Style.Attrs&1 != 0 }},
		{"Match handles", func(r, c int) bool { return w.term.emu.CellAt(c, r).Style.Fg != nil }},
	} {
		row, col := findCell(w.term.emu.String(), c.text)
		if row < 0 || !c.ok(row, col) {
			t.Errorf("%q is not styled (cell %+v)", c.text, w.term.emu.CellAt(col, row))
		}
	}
}
