package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// Tests of what a permission prompt shows of the call it asks about
// (issue 43, items 5, 6, 7 and the chained-command part of 13).

// numbered is a file of n numbered lines.
func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d of the file\n", i)
	}
	return b.String()
}

// asksOnce is a policy whose lead makes one call, then says done.
func asksOnce(name string, input map[string]any) func(*fakeapi.Request) fakeapi.Reply {
	return func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			return fakeapi.Reply{Content: []fakeapi.Block{use(name, input)}}
		}
		return fakeapi.TextReply("done")
	}
}

// readsThen is a policy whose lead reads path, then makes one call, then
// says done.
func readsThen(path *string, name string, input map[string]any) func(*fakeapi.Request) fakeapi.Reply {
	return func(r *fakeapi.Request) fakeapi.Reply {
		switch r.Turn() {
		case 0:
			return fakeapi.Reply{Content: []fakeapi.Block{use("Read", map[string]any{"file_path": *path})}}
		case 1:
			input["file_path"] = *path
			return fakeapi.Reply{Content: []fakeapi.Block{use(name, input)}}
		}
		return fakeapi.TextReply("done")
	}
}

// TestEditPromptShowsTheDiff: an Edit prompt shows the change in place —
// line numbers, three lines of context, the removed line red and the
// added one green — and how many lines it adds and removes.
func TestEditPromptShowsTheDiff(t *testing.T) {
	var path string
	w := newWorld(t, worldConfig{}, readsThen(&path, "Edit", map[string]any{"old_string": "line 10 of the file\n",
		"new_string": "line ten, rewritten\nand a line more\n"}))
	path = filepath.Join(w.dir, "notes.txt")
	if err := os.WriteFile(path, []byte(numbered(20)), 0o644); err != nil {
		t.Fatal(err)
	}
	w.waitFor("default mode")
	w.typeText("fix line ten")
	w.key("enter")
	// The prompt can show before the Read's result and the Edit's line
	// (events and prompts come by separate ways): the frame is the one
	// with all of them.
	scr := w.waitFor("Permission", "Edit ", "+2 −1", "10 - line 10 of the file", "11 + and a line more",
		"line 1 of the file (+19 lines)", "◆ Edit(", "└ running…")
	w.golden("permission-edit-diff", scr)
	w.term.mu.Lock()
	row, col := findCell(w.term.emu.String(), "- line 10")
	cell := w.term.emu.CellAt(col, row)
	w.term.mu.Unlock()
	if cell == nil || cell.Style.Fg == nil {
		t.Errorf("the removed line has no colour (cell %+v)", cell)
	}
	w.key("1")
	w.waitFor("done")
	if got := readFile(t, path); !strings.Contains(got, "line 9 of the file\nline ten, rewritten\nand a line more\nline 11") {
		t.Errorf("the approved edit did not run:\n%s", got)
	}
}

// TestMultiEditPromptShowsEveryHunk: the edits of a MultiEdit are applied
// in order and shown as one diff, hunk after hunk.
func TestMultiEditPromptShowsEveryHunk(t *testing.T) {
	var path string
	w := newWorld(t, worldConfig{}, func(r *fakeapi.Request) fakeapi.Reply {
		return asksOnce("MultiEdit", map[string]any{"file_path": path, "edits": []map[string]any{
			{"old_string": "line 2 of the file", "new_string": "line two"},
			{"old_string": "line 30 of the file", "new_string": "line thirty"}}})(r)
	})
	path = filepath.Join(w.dir, "notes.txt")
	if err := os.WriteFile(path, []byte(numbered(40)), 0o644); err != nil {
		t.Fatal(err)
	}
	w.waitFor("default mode")
	w.typeText("rename two lines")
	w.key("enter")
	scr := w.waitFor("Permission", "+2 −2", "2 + line two", "30 + line thirty", "⋯", "└ running…")
	w.golden("permission-multiedit-diff", scr)
	w.key("esc")
	w.waitFor("done")
}

// TestWritePromptScrolls: a Write prompt shows the content, numbered; a
// long one scrolls a page at a time and says where the page is.
func TestWritePromptScrolls(t *testing.T) {
	var path string
	w := newWorld(t, worldConfig{}, func(r *fakeapi.Request) fakeapi.Reply {
		return asksOnce("Write", map[string]any{"file_path": path, "content": numbered(60)})(r)
	})
	path = filepath.Join(w.dir, "new.txt")
	w.waitFor("default mode")
	w.typeText("write it")
	w.key("enter")
	first := w.waitFor("Permission", "Create ", "1   line 1 of the file", "lines 1–", "└ running…")
	w.golden("permission-write-content", first)
	w.key("pgdown")
	w.key("pgdown")
	scrolled := w.waitFor("lines 37–55 of 60")
	w.golden("permission-write-scrolled", scrolled)
	w.key("end")
	w.waitFor("60   line 60 of the file", "of 60")
	w.key("1")
	w.waitFor("done")
	if got := readFile(t, path); got != numbered(60) {
		t.Errorf("the file holds %d bytes, want the 60 lines", len(got))
	}
}

// TestPromptOnASmallTerminal (bad input): on a terminal too small for the
// diff, the answers stay on screen on one line, with how to page, and the
// diff pages; an answer still works.
func TestPromptOnASmallTerminal(t *testing.T) {
	var path string
	w := newWorld(t, worldConfig{width: 44, height: 7}, readsThen(&path, "Edit", map[string]any{"old_string": "line 10 of the file\n",
		"new_string": "line ten\n"}))
	path = filepath.Join(w.dir, "notes.txt")
	if err := os.WriteFile(path, []byte(numbered(20)), 0o644); err != nil {
		t.Fatal(err)
	}
	w.waitFor("default mode")
	w.typeText("fix it")
	w.key("enter")
	scr := w.waitFor("1 yes · 2 yes+ · 3 no · ↑↓ pgup/pgdn", "- line 10 of the file", "└ running…")
	w.golden("permission-small", scr)
	w.key("pgdown")
	w.waitFor("+ line ten")
	w.key("1")
	w.waitFor("done")
	if got := readFile(t, path); !strings.Contains(got, "line ten\n") {
		t.Errorf("the edit did not run after the answer:\n%s", got)
	}
}

// TestChainedCommandAlwaysAllowsEach: "always allow" for `a && b` offers
// a rule for each command, and keeps both.
func TestChainedCommandAlwaysAllowsEach(t *testing.T) {
	w := newWorld(t, worldConfig{}, asksOnce("Bash", map[string]any{"command": "mkdir -p out && touch out/made.txt"}))
	w.waitFor("default mode")
	w.typeText("make it")
	w.key("enter")
	scr := w.waitFor("Permission", "always allow Bash(mkdir:*), Bash(touch:*)", "└ running…")
	w.golden("permission-chained", scr)
	w.key("2")
	w.waitFor("done")
	waitFile(t, filepath.Join(w.dir, "out", "made.txt"))
	data := readFile(t, filepath.Join(w.dir, ".cohort", "settings.local.json"))
	for _, rule := range []string{`"Bash(mkdir:*)"`, `"Bash(touch:*)"`} {
		if !strings.Contains(data, rule) {
			t.Errorf("settings.local.json does not hold %s:\n%s", rule, data)
		}
	}
}

// TestLongCommandIsShownWhole: a one-line command longer than the
// terminal is wide wraps in the prompt, so the end of the chain — here a
// cleanup that deletes — is on screen before the user says yes. (Played
// through the relay, a teammate's 230-character command was cut at the
// edge of a 200-column terminal, its `; rm -rf "$d"` never shown.)
func TestLongCommandIsShownWhole(t *testing.T) {
	cmd := `d=$(mktemp -d) && cp -r ./src/. "$d" && cd "$d" && sed -i '3016s/if j > 0 {/if j > 1 {/' gjson.go && ` +
		`go test -run 'TestReverseArrayCommas$' .; s=$?; rm -rf "$d"; exit $s`
	w := newWorld(t, worldConfig{width: 100, height: 30}, asksOnce("Bash", map[string]any{"command": cmd}))
	w.waitFor("default mode")
	w.typeText("check it")
	w.key("enter")
	scr := w.waitFor("Permission", `s=$?; rm -rf "$d"; exit $s`, "└ running…")
	w.golden("permission-long-command", scr)
	w.key("esc")
	w.waitFor("done")
}

// TestLargeAndBinaryContentIsSummarised (bad input): a 50 MB Write and a
// binary one are described in the prompt, never laid out whole; the
// frame fits a small and a large terminal. (The inputs are written as
// JSON, as the model's call arrives.)
func TestLargeAndBinaryContentIsSummarised(t *testing.T) {
	for _, c := range []struct {
		name, content, want string
	}{
		// 21 bytes a piece, with an escape sequence in each.
		{"large", strings.Repeat(`0123456789abcdef\u001b[2J `, 50<<20/21), "50.0 MB in 1 lines; lines longer than 1000 characters are cut"},
		{"many-lines", strings.Repeat(`a line\n`, 100_000), "683 KB in 100000 lines: the first 2000 are shown"},
		{"binary", `\u007fELF` + strings.Repeat(`\u0000\u0001`, 1<<16), "the content is binary (128 KB); not shown"},
	} {
		req := cohort.PermissionRequest{Tool: "Write", Input: []byte(`{"file_path":"/tmp/x","content":"` + c.content + `"}`)}
		view := prepare(req)
		for _, size := range [][2]int{{20, 5}, {120, 40}} {
			m := newModel(Options{Session: newCrowd(3, time.Now())})
			m.width, m.high = size[0], size[1]
			m.dialog = newPermissionDialog(permissionMsg{req: req, view: view, reply: make(chan cohort.Decision, 1)}, nil, "/work")
			scr := m.frame()
			checkFrame(t, scr, size[0], size[1])
			if len(scr) > 64<<10 {
				t.Errorf("%s: the frame is %d bytes", c.name, len(scr))
			}
			if size[0] == 120 && !strings.Contains(scr, c.want) {
				t.Errorf("%s: the prompt does not say %q:\n%s", c.name, c.want, scr)
			}
		}
	}
}

// costs match the status bar's total, which a wide terminal shows and
// which follows the tree's refresh, not the prompt.
var costs = regexp.MustCompile(`\$\d+\.\d{4}`)

// sandboxed is a world whose session runs its Bash commands in the real
// sandbox (Landlock).
func sandboxed(c *cohort.Config) { c.Sandbox = "on" }

// TestUnsandboxedCommandIsMarked: a Bash call with
// dangerouslyDisableSandbox says, in red, that it runs outside the
// sandbox, and shows its whole command (every line) and where it runs.
func TestUnsandboxedCommandIsMarked(t *testing.T) {
	w := newWorld(t, worldConfig{width: 180, height: 30, configure: sandboxed}, asksOnce("Bash", map[string]any{
		"command": "for f in a b; do\n  echo $f > /tmp/out-$f\ndone", "dangerouslyDisableSandbox": true}))
	w.waitFor("default mode")
	w.typeText("run it outside")
	w.key("enter")
	scr := w.waitFor("Permission", "⚠ runs OUTSIDE the sandbox", "echo $f > /tmp/out-$f", "done", "  in /", "└ running…")
	w.golden("permission-unsandboxed", costs.ReplaceAllString(scr, "$$N"))
	w.key("esc")
	w.waitFor("done")
}

// TestSandboxWouldBlockOffersThePath: a command approved to write outside
// the sandbox's writable dirs fails there, and its prompt said so; the
// prompt's offer to let commands write that directory for the session,
// taken, makes the next such command succeed in the real sandbox, and the
// prompt after it no longer warns. A command aimed at Cohort's own home is
// never offered the directory.
// receive waits, up to the harness's deadline, for the next tool result.
func receive(t *testing.T, results <-chan string) string {
	t.Helper()
	select {
	case got := <-results:
		return got
	case <-time.After(deadline):
		t.Fatal("no tool result reached the model")
		return ""
	}
}

func TestSandboxWouldBlockOffersThePath(t *testing.T) {
	var outside, home string
	results := make(chan string, 8)
	w := newWorld(t, worldConfig{width: 180, height: 30, configure: sandboxed}, func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() > 0 {
			results <- r.LastToolResultText()
		}
		steps := []string{"mkdir -p " + outside + "/first/deeper", "mkdir -p " + outside + "/second/deeper",
			"touch " + outside + "/third.txt", "mkdir -p " + filepath.Join(home, ".cohort", "evil")}
		if r.Turn() < len(steps) {
			return fakeapi.Reply{Content: []fakeapi.Block{use("Bash", map[string]any{"command": steps[r.Turn()]})}}
		}
		return fakeapi.TextReply("done")
	})
	outside, home = filepath.Join(filepath.Dir(w.dir), "outside"), w.home
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	w.waitFor("default mode")
	w.typeText("make the dirs")
	w.key("enter")
	// Approved as it is: the sandbox blocks it, as the prompt warned.
	scr := w.waitFor("Permission", "⚠ the sandbox keeps commands from writing in", "let commands write in", "└ running…")
	w.golden("permission-sandbox-blocks", costs.ReplaceAllString(scr, "$$N"))
	w.key("1")
	if got := receive(t, results); !strings.Contains(got, "blocked by the sandbox") {
		t.Fatalf("the first mkdir was not blocked by the sandbox: %s", got)
	}
	if _, err := os.Stat(filepath.Join(outside, "first")); err == nil {
		t.Fatal("the sandbox let the first mkdir through")
	}
	// Approved with the offer: it runs.
	w.waitFor("second/deeper", "let commands write in")
	w.key("2")
	if got := receive(t, results); strings.Contains(got, "blocked") {
		t.Fatalf("the second mkdir failed after the directory was allowed: %s", got)
	}
	waitFile(t, filepath.Join(outside, "second", "deeper"))
	// The next prompt there has no warning: the directory is writable now.
	// The call's line shows before its prompt does, so wait for the
	// prompt's own words: a key sent earlier would go to the input box.
	scr = w.waitFor("Permission", "third.txt", "1 Yes")
	if strings.Contains(scr, "⚠") || strings.Contains(scr, "let commands write") {
		t.Errorf("the prompt still warns after the directory was allowed:\n%s", scr)
	}
	w.key("1")
	receive(t, results)
	waitFile(t, filepath.Join(outside, "third.txt"))
	// Cohort's home is never offered.
	scr = w.waitFor("Permission", filepath.Join(".cohort", "evil"), "1 Yes")
	if strings.Contains(scr, "let commands write") {
		t.Errorf("the prompt offers to open Cohort's home:\n%s", scr)
	}
	w.key("esc")
	w.waitFor("done")
}
