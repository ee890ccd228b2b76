package tui

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
)

// machine is a stand-in for the registry of background sessions: what the
// view lists, stops and dispatches.
type machine struct {
	mu       sync.Mutex
	rows     []SessionRow
	warnings []string
	stopped  []string
	prompts  []string
}

func (mc *machine) list(context.Context) ([]SessionRow, []string, error) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	return append([]SessionRow(nil), mc.rows...), mc.warnings, nil
}

func (mc *machine) stop(_ context.Context, id string) error {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	for i := range mc.rows {
		if mc.rows[i].ID == id {
			mc.rows[i].Alive, mc.rows[i].State, mc.rows[i].Status = false, "stopped", ""
		}
	}
	mc.stopped = append(mc.stopped, id)
	return nil
}

func (mc *machine) dispatch(_ context.Context, prompt string) (string, error) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	id := fmt.Sprintf("cafe%04d", len(mc.prompts))
	mc.prompts = append(mc.prompts, prompt)
	mc.rows = append([]SessionRow{{ID: id, Name: prompt, State: "working", Status: "busy", Alive: true}}, mc.rows...)
	return id, nil
}

// sessionsWorld runs the sessions view on an emulator.
type sessionsWorld struct {
	t     *testing.T
	term  *vterm
	prog  *tea.Program
	model *sessionsModel
	done  chan error
	w     world // for its waits
}

func newSessionsWorld(t *testing.T, mc *machine, width, height int) *sessionsWorld {
	now := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	opts := SessionsOptions{List: mc.list, Stop: mc.stop, Dispatch: mc.dispatch, Defaults: "in /src/app",
		Every: 20 * time.Millisecond, Now: func() time.Time { return now }}
	sw := &sessionsWorld{t: t, term: newTerm(width, height), done: make(chan error, 1)}
	sw.prog, sw.model = newSessionsProgram(context.Background(), opts, nil, sw.term,
		tea.WithWindowSize(width, height), tea.WithoutSignalHandler(), tea.WithColorProfile(colorprofile.ANSI256))
	sw.w = world{t: t, term: sw.term, prog: sw.prog}
	go func() {
		_, err := sw.prog.Run()
		sw.done <- err
	}()
	t.Cleanup(sw.end)
	return sw
}

// end waits for the program to end (quitting it if it has not) and stops
// its painter.
func (sw *sessionsWorld) end() {
	if sw.done == nil {
		return
	}
	sw.prog.Quit()
	select {
	case err := <-sw.done:
		if err != nil {
			sw.t.Errorf("program: %v", err)
		}
	case <-time.After(deadline):
		sw.t.Fatal("the program did not end")
	}
	sw.done = nil
	sw.model.paint.stop()
}

func twoSessions() *machine {
	at := time.Date(2026, 12, 6, 11, 59, 30, 0, time.UTC)
	return &machine{rows: []SessionRow{
		{ID: "aaaa0001", Name: "fix the flaky test", State: "working", Status: "busy", Agents: 2, CostUSD: 0.0125,
			Active: at, Alive: true, Dir: "/src/app", Detail: "running the tests"},
		{ID: "bbbb0002", Name: "write the release notes", State: "blocked", Status: "waiting", Agents: 1,
			CostUSD: 0.5, Active: at.Add(-5 * time.Minute), Alive: true, Dir: "/src/docs", Detail: "waiting for permission: Write"},
	}}
}

// selectedLine is the screen's line with the selection mark.
func selectedLine(scr string) string {
	for l := range strings.Lines(scr) {
		if strings.Contains(l, "▸") {
			return l
		}
	}
	return ""
}

// TestSessionsViewListsStopsDispatchesAndChooses: the view lists the
// machine's sessions with state, agents, cost and last activity; x stops
// the selected one; n takes a prompt and dispatches it, and the new
// session is selected once listed; Enter ends the view with the selected
// id.
func TestSessionsViewListsStopsDispatchesAndChooses(t *testing.T) {
	mc := twoSessions()
	sw := newSessionsWorld(t, mc, 100, 16)
	scr := sw.w.waitFor("Sessions on this machine · 2 running · $0.5125", "aaaa0001", "◐ working", "$0.0125", "30s ago",
		"bbbb0002", "? waiting", "5m ago", "in /src/app", "running the tests", "enter attach")
	if l := selectedLine(scr); !strings.Contains(l, "aaaa0001") {
		t.Fatalf("the first session is not selected first: %q", l)
	}
	sw.w.key("down")
	sw.w.waitUntil("the second selected", func(s string) bool { return strings.Contains(selectedLine(s), "bbbb0002") })
	sw.w.waitFor("in /src/docs", "waiting for permission: Write")
	sw.w.key("x")
	sw.w.waitFor("stopped · bbbb0002", "■ stopped", "1 running")
	sw.w.key("n")
	sw.w.waitFor("new background session in /src/app")
	sw.w.typeText("tidy the imports")
	sw.w.key("enter")
	scr = sw.w.waitFor("started · cafe0000 · tidy the imports", "2 running")
	if l := selectedLine(scr); !strings.Contains(l, "cafe0000") {
		t.Fatalf("the new session is not selected: %q\n%s", l, scr)
	}
	sw.w.key("down")
	sw.w.waitUntil("the first selected", func(s string) bool { return strings.Contains(selectedLine(s), "aaaa0001") })
	sw.w.key("enter")
	select {
	case err := <-sw.done:
		if err != nil {
			t.Fatal(err)
		}
		sw.done = nil
		sw.model.paint.stop()
	case <-time.After(deadline):
		t.Fatal("enter did not end the view")
	}
	if sw.model.chosen != "aaaa0001" {
		t.Fatalf("chosen %q, want aaaa0001", sw.model.chosen)
	}
	mc.mu.Lock()
	defer mc.mu.Unlock()
	if fmt.Sprint(mc.stopped, mc.prompts) != "[bbbb0002] [tidy the imports]" {
		t.Fatalf("stopped %v, dispatched %v", mc.stopped, mc.prompts)
	}
}

// TestSessionsViewRefusesAndWarns: x on an ended session says it is not
// running (nothing is stopped), Esc leaves a half-typed prompt without
// dispatching it, and an unreadable record's warning is shown by path.
func TestSessionsViewRefusesAndWarns(t *testing.T) {
	mc := twoSessions()
	mc.rows[0].Alive, mc.rows[0].State, mc.rows[0].Status = false, "dead", ""
	mc.warnings = []string{"/home/u/.cohort/bg/zz.json: line 1: invalid character (skipped)"}
	sw := newSessionsWorld(t, mc, 100, 16)
	sw.w.waitFor("✗ dead", "warning: /home/u/.cohort/bg/zz.json: line 1")
	sw.w.key("x")
	sw.w.waitFor("aaaa0001 is not running (dead)")
	sw.w.key("n")
	sw.w.typeText("never mind")
	sw.w.waitFor("> never mind")
	sw.w.key("esc")
	sw.w.waitUntil("the prompt gone", func(s string) bool { return !strings.Contains(s, "never mind") && strings.Contains(s, "enter attach") })
	sw.end()
	mc.mu.Lock()
	defer mc.mu.Unlock()
	if len(mc.stopped)+len(mc.prompts) != 0 {
		t.Fatalf("stopped %v, dispatched %v", mc.stopped, mc.prompts)
	}
}

// TestSessionsViewFitsSmallTerminals: every line fits the width and the
// frame the height, down to 20×5, with the keys still on the last line.
func TestSessionsViewFitsSmallTerminals(t *testing.T) {
	for _, size := range [][2]int{{20, 5}, {40, 8}, {120, 40}} {
		mc := twoSessions()
		m := &sessionsModel{opts: SessionsOptions{Now: time.Now}, st: newStyles(), width: size[0], high: size[1]}
		rows, _, _ := mc.list(context.Background())
		m.Update(rowsMsg{rows: rows})
		frame := m.frame()
		lines := strings.Split(frame, "\n")
		if len(lines) != size[1] {
			t.Errorf("%dx%d: %d lines", size[0], size[1], len(lines))
		}
		for _, l := range lines {
			if w := ansi.StringWidth(l); w > size[0] {
				t.Errorf("%dx%d: a line %d wide: %q", size[0], size[1], w, ansi.Strip(l))
			}
		}
		if last := ansi.Strip(lines[len(lines)-1]); !strings.HasPrefix(last, "↑↓ select") {
			t.Errorf("%dx%d: the last line is %q, not the keys", size[0], size[1], last)
		}
	}
}
