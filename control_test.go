package cohort

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// running collects a Run in the background.
type running struct {
	t    *testing.T
	done chan []Event
}

func start(t *testing.T, s *Session, prompt string) *running {
	r := &running{t: t, done: make(chan []Event, 1)}
	go func() { r.done <- collect(t, s, prompt) }()
	return r
}

func (r *running) wait() []Event {
	r.t.Helper()
	select {
	case evs := <-r.done:
		return evs
	case <-time.After(time.Minute):
		r.t.Fatal("the Run did not end")
		return nil
	}
}

// agentOf waits until the session has an agent of kind in state and
// returns it.
func agentOf(t *testing.T, s *Session, kind, state string) AgentInfo {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		for _, a := range s.Agents() {
			if a.Kind == kind && a.State == state {
				return a
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no %s agent is %s: %+v", kind, state, s.Agents())
	return AgentInfo{}
}

// TestInterrupt: Interrupt ends the running turn with an error result.
func TestInterrupt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := newGate()
	e.rt.on("hang", func(r *fakeapi.Request) fakeapi.Reply {
		g.wait(r)
		return fakeapi.TextReply("never")
	})
	s := e.open(e.config())
	run := start(t, s, "hang here")
	g.await(t)
	if err := s.Interrupt(); err != nil {
		t.Fatal(err)
	}
	res := last(run.wait())
	if !res.IsError || !strings.Contains(res.Result, "interrupted") {
		t.Fatalf("result %+v, want an interrupted error", res)
	}
}

// TestSend: text sent while the lead works reaches it at its next
// tool-result boundary, with the tool's result.
func TestSend(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := newGate()
	if err := os.WriteFile(filepath.Join(e.dir, "a.txt"), []byte("alpha\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	seen := make(chan string, 1)
	e.rt.on("read a", func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			g.wait(r)
			return fakeapi.Reply{Content: []fakeapi.Block{use("Read", map[string]any{"file_path": filepath.Join(e.dir, "a.txt")})}}
		}
		seen <- r.LastUserText()
		return fakeapi.TextReply("read both")
	})
	s := e.open(e.config())
	run := start(t, s, "read a")
	g.await(t)
	if err := s.Send("TYPED-AHEAD: also look at b"); err != nil {
		t.Fatal(err)
	}
	if p := s.Pending(); len(p) != 1 || p[0].Text != "TYPED-AHEAD: also look at b" || !p[0].Read.IsZero() {
		t.Fatalf("Pending before the lead read the text = %+v", p)
	}
	close(g.open)
	got := <-seen
	if !strings.Contains(got, "alpha") || !strings.Contains(got, "TYPED-AHEAD") {
		t.Fatalf("the lead's next input %q lacks the tool result or the sent text", got)
	}
	// The request that carried it went out after it was recorded: it is
	// reported read once, then no more.
	if p := s.Pending(); len(p) != 1 || p[0].Read.IsZero() {
		t.Fatalf("Pending after the lead read the text = %+v", p)
	}
	if p := s.Pending(); len(p) != 0 {
		t.Fatalf("Pending reports a read text twice: %+v", p)
	}
	if res := last(run.wait()); res.Result != "read both" {
		t.Fatalf("result %+v", res)
	}
}

// TestSetPermissionMode: a mode set during the turn decides the lead's
// next call: Write, denied in default mode without a prompter, runs in
// acceptEdits.
func TestSetPermissionMode(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := newGate()
	target := filepath.Join(e.dir, "out.txt")
	e.rt.on("write it", func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			g.wait(r)
			return fakeapi.Reply{Content: []fakeapi.Block{use("Write", map[string]any{"file_path": target, "content": "written\n"})}}
		}
		return fakeapi.TextReply("wrote: " + r.LastToolResultText())
	})
	s := e.open(e.config())
	run := start(t, s, "write it")
	g.await(t)
	if err := s.SetPermissionMode("acceptEdits"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetPermissionMode("sometimes"); err == nil {
		t.Error("an unknown mode was accepted")
	}
	close(g.open)
	res := last(run.wait())
	if data, err := os.ReadFile(target); err != nil || string(data) != "written\n" {
		t.Fatalf("the Write did not run in acceptEdits (%v); result %q", err, res.Result)
	}
	if agents := s.Agents(); agents[0].PermissionMode != "acceptEdits" {
		t.Errorf("the lead's mode is %q", agents[0].PermissionMode)
	}
}

// TestSetModel: the lead's next request names the new model.
func TestSetModel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := newGate()
	models := make(chan string, 4)
	e.rt.on("which model", func(r *fakeapi.Request) fakeapi.Reply {
		models <- r.Model
		if r.Turn() == 0 {
			g.wait(r)
			return fakeapi.Reply{Content: []fakeapi.Block{use("Glob", map[string]any{"pattern": "*"})}}
		}
		return fakeapi.TextReply("switched")
	})
	s := e.open(e.config())
	run := start(t, s, "which model")
	g.await(t)
	if err := s.SetModel("opus"); err != nil {
		t.Fatal(err)
	}
	close(g.open)
	run.wait()
	first, second := <-models, <-models
	if !strings.Contains(first, "sonnet") || !strings.Contains(second, "opus") {
		t.Fatalf("models %q then %q, want sonnet then opus", first, second)
	}
}

// TestStopAgent: a background agent stopped from outside reports killed,
// the lead hears of it, and the Run ends.
func TestStopAgent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := newGate()
	e.rt.on("BG-WORK", func(r *fakeapi.Request) fakeapi.Reply {
		g.wait(r)
		return fakeapi.TextReply("finished anyway")
	})
	e.rt.on("start a worker", func(r *fakeapi.Request) fakeapi.Reply {
		switch r.Turn() {
		case 0:
			return fakeapi.Reply{Content: []fakeapi.Block{use("Agent", map[string]any{"description": "bg", "prompt": "BG-WORK", "run_in_background": true})}}
		case 1:
			return fakeapi.TextReply("launched")
		}
		return fakeapi.TextReply("heard: " + r.LastUserText())
	})
	s := e.open(e.config())
	run := start(t, s, "start a worker")
	g.await(t)
	bg := agentOf(t, s, "background", AgentRunning)
	if err := s.StopAgent(bg.ID); err != nil {
		t.Fatal(err)
	}
	res := last(run.wait())
	if !strings.Contains(res.Result, "killed") {
		t.Fatalf("the lead's last turn %q does not see the agent killed", res.Result)
	}
	for _, a := range s.Agents() {
		if a.ID == bg.ID && a.State != AgentKilled {
			t.Errorf("the stopped agent is %s", a.State)
		}
	}
	if err := s.StopAgent(bg.ID); err == nil {
		t.Error("stopping it again succeeded")
	}
	if err := s.StopAgent(s.Agents()[0].ID); err == nil {
		t.Error("StopAgent stopped the lead")
	}
}

// TestBackground: a running synchronous subagent moved to the background
// frees the lead at once; its result arrives later as a notification.
func TestBackground(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := newGate()
	e.rt.on("SYNC-WORK", func(r *fakeapi.Request) fakeapi.Reply {
		g.wait(r)
		return fakeapi.TextReply("sync result")
	})
	early := make(chan bool, 1)
	e.rt.on("delegate", func(r *fakeapi.Request) fakeapi.Reply {
		switch r.Turn() {
		case 0:
			return fakeapi.Reply{Content: []fakeapi.Block{use("Agent", map[string]any{"description": "sync", "prompt": "SYNC-WORK"})}}
		case 1:
			select {
			case <-g.open:
				early <- false
			default:
				early <- true
			}
			return fakeapi.TextReply("moved on")
		}
		return fakeapi.TextReply("got: " + r.LastUserText())
	})
	s := e.open(e.config())
	run := start(t, s, "delegate")
	g.await(t)
	sub := agentOf(t, s, "subagent", AgentRunning)
	if err := s.Background(sub.ID); err != nil {
		t.Fatal(err)
	}
	var freed bool
	select {
	case freed = <-early:
	case <-time.After(30 * time.Second):
		t.Fatal("the lead did not go on after Background")
	}
	if !freed {
		t.Fatal("the lead went on only after the subagent finished")
	}
	close(g.open)
	res := last(run.wait())
	if !strings.Contains(res.Result, "sync result") {
		t.Fatalf("the lead's last turn %q lacks the backgrounded agent's result", res.Result)
	}
}

// TestMessageTeammate: the user's message reaches an in-process teammate
// while the team works.
func TestMessageTeammate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := newGate()
	heard := make(chan string, 4)
	e.rt.on("ALICE-START", func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			g.wait(r)
			return fakeapi.TextReply("started")
		}
		heard <- r.LastUserText()
		return fakeapi.TextReply("noted")
	})
	e.rt.on("form a team", func(r *fakeapi.Request) fakeapi.Reply {
		switch r.Turn() {
		case 0:
			return fakeapi.Reply{Content: []fakeapi.Block{use("TeamCreate", map[string]any{"team_name": "crew", "description": "test"})}}
		case 1:
			return fakeapi.Reply{Content: []fakeapi.Block{use("Agent", map[string]any{"description": "alice", "prompt": "ALICE-START", "name": "alice", "team_name": "crew", "subagent_type": "general-purpose"})}}
		}
		return fakeapi.TextReply("waiting")
	})
	cfg := e.config()
	cfg.TeammateMode = "in-process"
	s := e.open(cfg)
	run := start(t, s, "form a team")
	g.await(t)
	if err := s.Message("alice", "USER-PING: how is it going?"); err != nil {
		t.Fatal(err)
	}
	if err := s.Message("nobody", "hello"); err == nil {
		t.Error("a message to no one was accepted")
	}
	close(g.open)
	select {
	case got := <-heard:
		if !strings.Contains(got, "USER-PING") {
			t.Fatalf("alice's next input %q lacks the user's message", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("alice never took another turn")
	}
	run.wait()
}

// TestCompactAndClear: Compact between Runs summarises the lead's history;
// Clear makes the next Run start a new conversation.
func TestCompactAndClear(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var firsts []int
	e.rt.on("", func(r *fakeapi.Request) fakeapi.Reply {
		if strings.Contains(r.LastUserText(), "compacted") || strings.Contains(r.LastUserText(), "summary") {
			return fakeapi.TextReply("SUMMARY of the talk")
		}
		firsts = append(firsts, len(r.Messages))
		return fakeapi.TextReply("answer")
	})
	cfg := e.config()
	s := e.open(cfg)
	for _, p := range []string{"one", "two", "three", "four", "five"} {
		collect(t, s, p)
	}
	if err := s.Compact(t.Context()); err != nil {
		t.Fatal(err)
	}
	reqs := e.srv.Requests()
	if n := len(reqs); n != 6 || !strings.Contains(reqs[n-1].Request.LastUserText(), "summary") {
		t.Fatalf("%d requests; Compact sent no summary request", n)
	}
	collect(t, s, "six")
	reqs = e.srv.Requests()
	if got := reqs[len(reqs)-1].Request.FirstUserText(); !strings.Contains(got, "SUMMARY of the talk") {
		t.Fatalf("after Compact the conversation opens with %q", got)
	}
	if err := s.Clear(); err != nil {
		t.Fatal(err)
	}
	collect(t, s, "fresh start")
	reqs = e.srv.Requests()
	if r := reqs[len(reqs)-1].Request; len(r.Messages) != 1 || !strings.Contains(r.LastUserText(), "fresh start") {
		t.Fatalf("after Clear the request holds %d messages", len(r.Messages))
	}
}

// TestBreakThenClose: breaking out of Run interrupts the lead's turn but
// leaves its background agent running, in Agents(); Close then stops it,
// and no goroutine and no child process (the Bash sandbox's launcher, the
// agent) is left. Not parallel: it counts this process's children.
func TestBreakThenClose(t *testing.T) {
	e := newEnv(t)
	g := newGate()
	defer close(g.open)
	e.rt.on("BG-LONG", func(r *fakeapi.Request) fakeapi.Reply {
		g.wait(r)
		return fakeapi.TextReply("finished")
	})
	e.rt.on("work and leave", func(r *fakeapi.Request) fakeapi.Reply {
		switch r.Turn() {
		case 0:
			return fakeapi.Reply{Content: []fakeapi.Block{
				use("Bash", map[string]any{"command": "echo from-bash", "description": "echo"}),
				use("Agent", map[string]any{"description": "long", "prompt": "BG-LONG", "run_in_background": true}),
			}}
		}
		return fakeapi.TextReply("launched")
	})
	before := goleak.IgnoreCurrent()
	cfg := e.config()
	cfg.PermissionMode = "bypassPermissions"
	s, err := New(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var sawBash, sawAgent bool
	for ev, err := range s.Run(ctx, "work and leave") {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == EventUser && strings.Contains(string(mustJSON(ev.Message)), "from-bash") {
			sawBash = true
		}
		if ev.Subtype == SubtypeTaskStarted && ev.IsBackgrounded != nil && *ev.IsBackgrounded {
			sawAgent = true
		}
		if sawBash && sawAgent {
			break
		}
		if ev.Type == EventResult {
			t.Fatalf("the Run ended (%q) before both calls were seen", ev.Result)
		}
	}
	if !sawBash {
		t.Fatal("the run ended before Bash ran")
	}
	g.await(t)
	bg := agentOf(t, s, "background", AgentRunning)
	if len(children(t)) == 0 {
		t.Fatal("no child process while Bash's sandbox is open: the check below would prove nothing")
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, a := range s.Agents() {
		if a.ID == bg.ID && a.State == AgentRunning {
			t.Errorf("the background agent still runs after Close")
		}
	}
	if kids := children(t); len(kids) > 0 {
		t.Errorf("child processes left after Close: %v", kids)
	}
	e.srv.Close()
	goleak.VerifyNone(t, before)
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// children lists this process's child processes (pid: command).
func children(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	me := strconv.Itoa(os.Getpid())
	var out []string
	for _, en := range entries {
		if _, err := strconv.Atoi(en.Name()); err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", en.Name(), "status"))
		if err != nil {
			continue
		}
		var name, ppid string
		for _, line := range strings.Split(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "PPid:"); ok {
				ppid = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(line, "Name:"); ok {
				name = strings.TrimSpace(v)
			}
		}
		if ppid == me {
			out = append(out, en.Name()+": "+name)
		}
	}
	return out
}
