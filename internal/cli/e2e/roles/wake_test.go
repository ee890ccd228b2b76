package roles

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// newContent is the text of what a request adds since the agent's last
// answer: the blocks of its last user message.
func newContent(r *fakeapi.Request) []string {
	last := r.Messages[len(r.Messages)-1]
	var out []string
	for _, b := range last.Content {
		switch b.Type {
		case "text":
			out = append(out, b.Text)
		case "tool_result":
			out = append(out, "tool_result")
		}
	}
	return out
}

// onlyIdle reports whether every block is a teammate's idle notice.
func onlyIdle(blocks []string) bool {
	if len(blocks) == 0 {
		return false
	}
	for _, b := range blocks {
		for _, part := range strings.SplitAfter(b, "</teammate-message>") {
			part = strings.TrimSpace(part)
			if part != "" && !strings.Contains(part, `summary="idle"`) {
				return false
			}
		}
	}
	return true
}

// runTeamOfTwo runs a lead with two in-process teammates; each works one
// turn and then, when report is set, messages the lead before it ends.
// It returns the new content of each of the lead's wakes (requests that
// follow a finished turn, not a tool call) and all it was shown after its
// first two requests.
func runTeamOfTwo(t *testing.T, report bool) (wakes [][]string, seen []string) {
	t.Helper()
	var mu sync.Mutex
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		first := r.FirstUserText()
		for _, name := range []string{"ann", "ben"} {
			if !strings.Contains(first, "mate-"+name) {
				continue
			}
			if r.Turn() == 0 && report {
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("SendMessage", map[string]any{"to": "team-lead", "message": name + " finished the work", "summary": "done"})}}
			}
			// The last turn ends well after the report, past the lead's
			// coalescing of what arrives together.
			done := fakeapi.TextReply(name + " is done")
			if report {
				done.FirstTokenDelay = 400 * time.Millisecond
			}
			return done
		}
		if !strings.Contains(first, "lead a team of two") {
			return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "no rule for " + first}}
		}
		switch r.Turn() {
		case 0:
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("TeamCreate", map[string]any{"team_name": "pair", "description": "d"})}}
		case 1:
			return fakeapi.Reply{Content: []fakeapi.Block{
				clitest.Use("Agent", map[string]any{"description": "a", "team_name": "pair", "name": "ann", "prompt": "mate-ann: work"}),
				clitest.Use("Agent", map[string]any{"description": "b", "team_name": "pair", "name": "ben", "prompt": "mate-ben: work"})}}
		}
		c := newContent(r)
		mu.Lock()
		seen = append(seen, c...)
		if !slices.Contains(c, "tool_result") {
			wakes = append(wakes, c)
		}
		mu.Unlock()
		return fakeapi.TextReply("noted")
	}
	h := clitest.New(t, policy)
	if out, errOut, code := h.Run("-p", "lead a team of two", "--teammate-mode", "in-process"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	mu.Lock()
	defer mu.Unlock()
	return wakes, seen
}

// TestIdleNoticesDoNotWakeTheLead: teammates that report and then go idle
// wake the lead for their reports only; no lead request's only new content
// is idle notices.
func TestIdleNoticesDoNotWakeTheLead(t *testing.T) {
	t.Parallel()
	wakes, seen := runTeamOfTwo(t, true)
	saw := strings.Join(seen, "\n")
	for _, name := range []string{"ann", "ben"} {
		if !strings.Contains(saw, name+" finished the work") {
			t.Errorf("the lead never read %s's report; it was woken with %q", name, wakes)
		}
	}
	for i, w := range wakes {
		if onlyIdle(w) {
			t.Errorf("lead wake %d held only idle notices: %q", i+1, w)
		}
	}
}

// TestASilentTeamWakesTheLeadOnceQuiet: teammates that end without a word
// to the lead are not lost: once the whole team is idle the lead is woken
// once, with their idle notices and a line saying the team is idle.
func TestASilentTeamWakesTheLeadOnceQuiet(t *testing.T) {
	t.Parallel()
	wakes, _ := runTeamOfTwo(t, false)
	if len(wakes) != 1 {
		t.Fatalf("the lead was woken %d times, want once when the team went quiet: %q", len(wakes), wakes)
	}
	saw := strings.Join(wakes[0], "\n")
	for _, want := range []string{"ann is done", "ben is done", "Every teammate is idle"} {
		if !strings.Contains(saw, want) {
			t.Errorf("the wake lacks %q: %q", want, saw)
		}
	}
}
