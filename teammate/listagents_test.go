package teammate

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/sessionsock"
)

// TestListAgentsShowsWhoCanBeMessaged: a scripted lead starts a named
// background agent (kept busy until the test ends), then calls ListAgents
// as Claude Code's model would. The rows name the busy agent by its
// address, the two members of the lead's team, and the other live session
// on this machine by its uds: address; the session's own socket and a
// stale socket nothing listens on are left out. A cursor the tool never
// gave, and the channel and q fields Cohort lacks, get errors that say
// what to do.
func TestListAgentsShowsWhoCanBeMessaged(t *testing.T) {
	release := make(chan struct{})
	var calls sync.Map // turn -> ListAgents input
	inputs := []map[string]any{{}, {"cursor": "later"}, {"channel": "ops"}, {"q": "worker"}}
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		if strings.Contains(r.FirstUserText(), "WORK:") {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return fakeapi.TextReply("done")
		}
		turn := r.Turn()
		switch {
		case turn == 0:
			return fakeapi.ToolReply("", "Agent", map[string]any{"description": "busy work", "prompt": "WORK: keep going", "name": "worker", "run_in_background": true})
		case turn <= len(inputs):
			calls.Store(turn, r.LastToolResultText())
			return fakeapi.ToolReply("", "ListAgents", inputs[turn-1])
		}
		calls.Store(turn, r.LastToolResultText())
		return fakeapi.TextReply("listed")
	}
	f := newFixtureWith(t, policy, "alice", "bob")
	t.Cleanup(func() { close(release) })
	dir, err := os.MkdirTemp("", "la")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	f.l.cfg.SessionsDir = dir
	for _, id := range []string{"other", "s"} { // "s" is this session's own
		ls, err := sessionsock.Listen(t.Context(), sessionsock.Config{Dir: dir, SessionID: id,
			Handler: func(context.Context, mailbox.Message) error { return nil }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ls.Close() })
	}
	stale, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, "gone.sock"), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	stale.SetUnlinkOnClose(false)
	stale.Close()

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	if _, err := f.leadAgent.Engine().Send(ctx, []llm.Block{llm.Text("who is there?")}, ""); err != nil {
		t.Fatal(err)
	}
	result := func(turn int) string {
		v, _ := calls.Load(turn + 1)
		s, _ := v.(string)
		return s
	}
	list := result(1)
	for _, want := range []string{
		"4 agents you can message",
		"- worker · background agent (general-purpose) · busy · started by you",
		"- alice · member of team t · starting",
		"- bob · member of team t · starting",
		"- uds:" + filepath.Join(dir, "other.sock") + " · Cohort session other on this machine · live",
	} {
		if !strings.Contains(list, want) {
			t.Errorf("the listing lacks %q:\n%s", want, list)
		}
	}
	for _, not := range []string{"s.sock", "gone.sock", "team-lead"} {
		if strings.Contains(list, not) {
			t.Errorf("the listing shows %q:\n%s", not, list)
		}
	}
	for turn, want := range map[int]string{2: `cursor "later" is not one this tool gave`, 3: "channel is not available", 4: "q is not available"} {
		if got := result(turn); !strings.Contains(got, want) {
			t.Errorf("ListAgents %v answered %q, want %q", inputs[turn-1], got, want)
		}
	}
}

// TestListAgentsPages: a team of 60 members lists in two pages; the first
// ends with the cursor of the second, which the scripted model passes back,
// and a cursor past the end is refused.
func TestListAgentsPages(t *testing.T) {
	var results sync.Map
	var inputs = []map[string]any{{}, nil, {"cursor": "999"}}
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		turn := r.Turn()
		if turn > 0 {
			results.Store(turn, r.LastToolResultText())
		}
		if turn >= len(inputs) {
			return fakeapi.TextReply("listed")
		}
		in := inputs[turn]
		if in == nil { // the cursor the first page named
			v, _ := results.Load(1)
			first, _ := v.(string)
			_, after, _ := strings.Cut(first, "with cursor \"")
			cursor, _, _ := strings.Cut(after, "\"")
			in = map[string]any{"cursor": cursor}
		}
		return fakeapi.ToolReply("", "ListAgents", in)
	}
	var members []string
	for i := range 60 {
		members = append(members, fmt.Sprintf("m%02d", i))
	}
	f := newFixtureWith(t, policy, members...)
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	if _, err := f.leadAgent.Engine().Send(ctx, []llm.Block{llm.Text("who is there?")}, ""); err != nil {
		t.Fatal(err)
	}
	page := func(turn int) string { v, _ := results.Load(turn); s, _ := v.(string); return s }
	if p := page(1); strings.Count(p, "\n- ") != 50 || !strings.Contains(p, "60 agents you can message (rows 1-50)") || !strings.Contains(p, `cursor "50"`) {
		t.Errorf("first page:\n%s", p)
	}
	if p := page(2); strings.Count(p, "\n- ") != 10 || !strings.Contains(p, "(rows 51-60)") || strings.Contains(p, "More rows") {
		t.Errorf("second page:\n%s", p)
	}
	if p := page(3); !strings.Contains(p, "past the end of the listing (60 rows)") {
		t.Errorf("a cursor past the end: %q", p)
	}
}
