package tui

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// outputFileRe finds the output file a notification names.
var outputFileRe = regexp.MustCompile(`<output-file>([^<]+)</output-file>`)

// TestOwnTaskOutputReads (issue 43 items 8 and 13): a background command's
// notification carries the end of its output and shows as one line; the
// lead reads the output file Cohort named without a prompt; the scripted
// model then tries another session's output file directly, through "..",
// and through a link it planted in the project, and each of those asks
// (the test says no) and reads nothing.
func TestOwnTaskOutputReads(t *testing.T) {
	var (
		mu    sync.Mutex
		asked []string
		own   string
	)
	var w *world
	other := func() string {
		return filepath.Join(w.home, ".cohort", "tmp", "othersession", "tasks", "bother.output")
	}
	w = newWorld(t, worldConfig{configure: func(c *cohort.Config) {
		inner := c.CanUseTool
		c.CanUseTool = func(ctx context.Context, req cohort.PermissionRequest) (cohort.Decision, error) {
			mu.Lock()
			asked = append(asked, req.Tool+" "+string(req.Input))
			mu.Unlock()
			return inner(ctx, req)
		}
	}}, func(r *fakeapi.Request) fakeapi.Reply {
		read := func(p string) fakeapi.Reply {
			return fakeapi.Reply{Content: []fakeapi.Block{use("Read", map[string]any{"file_path": p})}}
		}
		last := r.LastUserText()
		switch r.Turn() {
		case 0:
			return fakeapi.Reply{Content: []fakeapi.Block{use("Bash", map[string]any{"command": "printf 'alpha\\nbeta\\ngamma\\n'",
				"description": "print three words", "run_in_background": true})}}
		case 1:
			return fakeapi.TextReply("Waiting for the command.")
		case 2:
			m := outputFileRe.FindStringSubmatch(last)
			if m == nil || !strings.Contains(last, "alpha\nbeta\ngamma") {
				return fakeapi.TextReply("NO-TAIL: the notification lacks the output: " + last)
			}
			mu.Lock()
			own = m[1]
			mu.Unlock()
			return read(m[1])
		case 3:
			return read(other())
		case 4:
			mu.Lock()
			p := filepath.Join(filepath.Dir(own), "..", "..", "othersession", "tasks", "bother.output")
			mu.Unlock()
			return read(p)
		case 5:
			return read(filepath.Join(w.dir, "mine.output"))
		}
		return fakeapi.TextReply("Read what I may.")
	})
	if err := os.MkdirAll(filepath.Dir(other()), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other(), []byte("OTHER-SESSION-SECRET\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other(), filepath.Join(w.dir, "mine.output")); err != nil {
		t.Fatal(err)
	}
	w.waitFor("default mode")
	w.typeText("run it in the background")
	w.key("enter")
	for i := 1; i <= 3; i++ {
		// Prompt i is on screen: the next cannot come before it is answered.
		w.waitUntil("a prompt", func(s string) bool {
			mu.Lock()
			defer mu.Unlock()
			return len(asked) == i && strings.Contains(s, "Permission")
		})
		w.key("esc")
	}
	scr := w.waitFor("Read what I may.", "done in")
	w.golden("taskoutput-reads", hideRoot(scr))
	if strings.Contains(scr, "NO-TAIL") || strings.Contains(scr, "OTHER-SESSION-SECRET") {
		t.Errorf("the notification lacked the output, or another session's output was read:\n%s", scr)
	}
	if !strings.Contains(scr, `· Background command "print three words" completed (exit code 0)`) {
		t.Errorf("the notification is not one readable line:\n%s", scr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 3 {
		t.Fatalf("%d prompts, want 3 (another session's output thrice, never the own):\n%s", len(asked), strings.Join(asked, "\n"))
	}
	for _, a := range asked {
		if strings.Contains(a, own) {
			t.Errorf("reading the lead's own output asked: %s", a)
		}
	}
}

// hideRoot replaces the test's temporary directory, which differs between
// runs but not in length, with a fixed one, and task ids with a fixed id.
func hideRoot(scr string) string {
	scr = tmpRoots.ReplaceAllStringFunc(scr, func(m string) string { return "/ROOT" + strings.Repeat("-", len(m)-5) })
	return taskIDs.ReplaceAllString(scr, "task b00000000")
}

var (
	taskIDs  = regexp.MustCompile(`\btask b[0-9a-z]{8}\b`)
	tmpRoots = regexp.MustCompile(`/tmp/[^/\s]+/\d+/r*`)
)
