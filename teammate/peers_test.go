package teammate

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/sessionsock"
)

// TestSendMessageToASessionByName: "to" may name another session of this
// machine by its name (any case), its short id or its session id, and the
// message reaches that session's socket; a team member of the same name
// wins over the session; a name two sessions share, and a name nothing
// has, are errors that list the sessions this one knows.
func TestSendMessageToASessionByName(t *testing.T) {
	f := newFixture(t)
	got := make(chan string, 8)
	listen := func(id string) string {
		ls, err := sessionsock.Listen(t.Context(), sessionsock.Config{Dir: filepath.Join(f.cohortHome, "sessions"), SessionID: id,
			Handler: func(ctx context.Context, m mailbox.Message) error {
				got <- id + ": " + m.Text
				return nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ls.Close() })
		return ls.Path()
	}
	worker, other := listen("sid-worker"), listen("sid-other")
	peers := []Peer{{Name: "worker", ID: "3fa9c1aa", SessionID: "sid-worker", Socket: worker},
		{SessionID: "sid-other", Socket: other}, {Name: "alice", ID: "0000aaaa", SessionID: "sid-worker", Socket: worker}}
	f.l.cfg.Peers = func(context.Context) []Peer { return peers }
	f.l.cfg.SessionsDir = filepath.Join(f.cohortHome, "sessions")
	rows := strings.Join(f.l.sessionRows(t.Context()), "\n")
	for _, w := range []string{"worker · Cohort session sid-worker (id 3fa9c1aa) on this machine, also uds:" + worker,
		"uds:" + other + " · Cohort session sid-other on this machine"} {
		if !strings.Contains(rows, w) {
			t.Errorf("ListAgents rows lack %q:\n%s", w, rows)
		}
	}

	for _, to := range []string{"worker", "WORKER", "3fa9c1aa", "sid-other"} {
		res := f.send(t, f.lead, map[string]any{"to": to, "message": "check the build " + to})
		if res.IsError || !strings.Contains(res.TextOf(), "delivered") {
			t.Errorf("to %q: %s", to, res.TextOf())
		}
		// Named as the model named it, beside the address its replies
		// will come from.
		if to == "worker" && !strings.Contains(res.TextOf(), `the session "worker" at uds:`+worker+" (message id ") {
			t.Errorf("to %q: the result does not name the session as asked and by its address: %s", to, res.TextOf())
		}
	}
	want := []string{"sid-worker: check the build worker", "sid-worker: check the build WORKER",
		"sid-worker: check the build 3fa9c1aa", "sid-other: check the build sid-other"}
	for _, w := range want {
		if g := <-got; g != w {
			t.Errorf("delivered %q, want %q", g, w)
		}
	}

	res := f.send(t, f.lead, map[string]any{"to": "alice", "message": "for the teammate"})
	if res.IsError || len(got) != 0 {
		t.Errorf("to alice: %s (the sessions got %d)", res.TextOf(), len(got))
	}
	if n, _ := f.mbox.Pending(t.Context(), "alice"); n != 1 {
		t.Errorf("alice has %d messages, want the one (a member's name wins over a session's)", n)
	}

	res = f.send(t, f.lead, map[string]any{"to": "nobody", "message": "hello?"})
	for _, w := range []string{`No member named "nobody"`, `"worker" (id 3fa9c1aa, session sid-worker)`, "session sid-other (uds:" + other + ")"} {
		if !res.IsError || !strings.Contains(res.TextOf(), w) {
			t.Errorf("to nobody: the error lacks %q: %s", w, res.TextOf())
		}
	}

	peers = append(peers, Peer{Name: "Worker", ID: "77", SessionID: "sid-other", Socket: other})
	res = f.send(t, f.lead, map[string]any{"to": "worker", "message": "which one?"})
	if !res.IsError || !strings.Contains(res.TextOf(), `"worker" names 2 sessions`) || !strings.Contains(res.TextOf(), "id 77") {
		t.Errorf("to a shared name: %s", res.TextOf())
	}
	if len(got) != 0 {
		t.Errorf("a refused send delivered %d messages", len(got))
	}
}

// TestSessionNameChecksTheTitle: options.session_name, as Claude Code
// 2.1.332's session-service SendMessage has it: with to "@find" nothing is
// sent and the sessions of that exact title are listed; with a session's
// id, the message goes only if that is its title now; with an agent's name
// as to, or "@find" without a title, nothing is sent and the model is told
// why.
func TestSessionNameChecksTheTitle(t *testing.T) {
	f := newFixture(t)
	got := make(chan string, 8)
	ls, err := sessionsock.Listen(t.Context(), sessionsock.Config{Dir: filepath.Join(f.cohortHome, "sessions"), SessionID: "sid-w",
		Handler: func(ctx context.Context, m mailbox.Message) error { got <- m.Text; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ls.Close() })
	peers := []Peer{{Name: "nightly build", ID: "3fa9c1aa", SessionID: "sid-w", Socket: ls.Path()}}
	f.l.cfg.Peers = func(context.Context) []Peer { return peers }
	opts := func(name string) map[string]any { return map[string]any{"session_name": name} }

	res := f.send(t, f.lead, map[string]any{"to": FindAddress, "message": "", "options": opts("nightly build")})
	if res.IsError || !strings.Contains(res.TextOf(), "Nothing was sent") || !strings.Contains(res.TextOf(), "id 3fa9c1aa") {
		t.Errorf("@find: %s", res.TextOf())
	}
	res = f.send(t, f.lead, map[string]any{"to": FindAddress, "message": "", "options": opts("Nightly Build")})
	if !strings.Contains(res.TextOf(), "No session on this machine is titled") {
		t.Errorf("@find of another case (titles are exact): %s", res.TextOf())
	}
	res = f.send(t, f.lead, map[string]any{"to": FindAddress, "message": "x"})
	if !res.IsError || !strings.Contains(res.TextOf(), "options.session_name") {
		t.Errorf("@find without a title: %s", res.TextOf())
	}
	for _, to := range []string{"3fa9c1aa", "sid-w"} {
		res = f.send(t, f.lead, map[string]any{"to": to, "message": "RIGHT-TITLE " + to, "options": opts("nightly build")})
		if res.IsError {
			t.Errorf("to %s with its title: %s", to, res.TextOf())
		}
	}
	res = f.send(t, f.lead, map[string]any{"to": "sid-w", "message": "WRONG-TITLE", "options": opts("release")})
	if !res.IsError || !strings.Contains(res.TextOf(), `is titled "nightly build" now, not "release"`) {
		t.Errorf("a title that is not the session's: %s", res.TextOf())
	}
	res = f.send(t, f.lead, map[string]any{"to": "alice", "message": "AGENT", "options": opts("nightly build")})
	if !res.IsError || !strings.Contains(res.TextOf(), "works only with another session's id") {
		t.Errorf("session_name with an agent as to: %s", res.TextOf())
	}
	for _, w := range []string{"RIGHT-TITLE 3fa9c1aa", "RIGHT-TITLE sid-w"} {
		if g := <-got; g != w {
			t.Errorf("delivered %q, want %q", g, w)
		}
	}
	if len(got) != 0 {
		t.Errorf("%d more messages were delivered", len(got))
	}
}
