package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/task"
)

// pause sleeps for d unless ctx ends first; it reports whether it slept.
func pause(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// gate is a one-shot signal with a bounded wait.
type gate struct {
	once sync.Once
	ch   chan struct{}
}

func newGate() *gate { return &gate{ch: make(chan struct{})} }

func (g *gate) open() { g.once.Do(func() { close(g.ch) }) }

// wait blocks until the gate opens, ctx ends or 20 s pass.
func (g *gate) wait(ctx context.Context) bool {
	select {
	case <-g.ch:
		return true
	case <-ctx.Done():
		return false
	case <-time.After(20 * time.Second):
		return false
	}
}

// lastUserNotices returns the notifications of a request's last message.
func lastUserNotices(r *fakeapi.Request) []clitest.Notice {
	return clitest.UserNotices(r.Messages[len(r.Messages)-1:])
}

// toolUseIDs returns the ids of the tool_use blocks named name in msgs,
// in order.
func toolUseIDs(msgs []fakeapi.Message, name string) []string {
	var ids []string
	for _, m := range msgs {
		for _, b := range m.Content {
			if b.Type == "tool_use" && b.Name == name {
				ids = append(ids, b.ID)
			}
		}
	}
	return ids
}

// resultBlocks returns the tool_result blocks of msgs keyed by tool_use id,
// with their text joined.
func resultBlocks(msgs []fakeapi.Message) map[string]toolResult {
	out := map[string]toolResult{}
	for _, m := range msgs {
		for _, b := range m.Content {
			if b.Type != "tool_result" {
				continue
			}
			var parts []string
			for _, c := range b.Content {
				parts = append(parts, c.Text)
			}
			out[b.ToolUseID] = toolResult{Text: strings.Join(parts, ""), IsError: b.IsError}
		}
	}
	return out
}

type toolResult struct {
	Text    string
	IsError bool
}

// cliRun is a CLI run in the background of a test.
type cliRun struct {
	done           chan struct{}
	stdout, stderr string
	code           int
}

// startCLI runs the CLI in a goroutine, so the test can look at files
// while agents work. Cleanup cancels the run and waits for it.
func startCLI(t *testing.T, h *clitest.Harness, args ...string) *cliRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	run := &cliRun{done: make(chan struct{})}
	go func() {
		defer close(run.done)
		run.stdout, run.stderr, run.code = h.RunCtx(ctx, args...)
	}()
	t.Cleanup(func() {
		cancel()
		<-run.done
	})
	return run
}

// wait returns once the run has ended, failing the test after 60 s.
func (c *cliRun) wait(t *testing.T) {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(60 * time.Second):
		t.Fatal("the CLI did not finish")
	}
}

// awaitPID waits for path to hold a pid and a newline.
func awaitPID(ctx context.Context, path string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for {
		data, err := os.ReadFile(path)
		if err == nil && strings.HasSuffix(string(data), "\n") {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
				return pid, nil
			}
		}
		if !pause(ctx, 5*time.Millisecond) {
			return 0, fmt.Errorf("no pid in %s: %w", path, ctx.Err())
		}
	}
}

// transcriptLines waits until the output file at path holds at least n
// complete lines and returns them, each checked to be a JSON object with
// a type and a message. The writer is asynchronous, so a line may reach
// the disk a moment after the event that produced it.
func transcriptLines(path string, n int) ([]string, os.FileInfo, error) {
	deadline := time.Now().Add(20 * time.Second)
	for {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, err
		}
		text := string(data)
		// Only complete lines count; a write may be under way.
		if i := strings.LastIndexByte(text, '\n'); i >= 0 {
			text = text[:i]
		} else {
			text = ""
		}
		var lines []string
		if text != "" {
			lines = strings.Split(text, "\n")
		}
		if len(lines) >= n {
			for i, l := range lines {
				var v struct {
					Type    string          `json:"type"`
					Message json.RawMessage `json:"message"`
				}
				if err := json.Unmarshal([]byte(l), &v); err != nil {
					return nil, nil, fmt.Errorf("%s line %d is not JSON: %v: %q", path, i+1, err, l)
				}
				if v.Type == "" || len(v.Message) == 0 {
					return nil, nil, fmt.Errorf("%s line %d has no type or message: %q", path, i+1, l)
				}
			}
			fi, err := os.Lstat(path)
			return lines, fi, err
		}
		if time.Now().After(deadline) {
			return nil, nil, errors.New(path + ": the transcript did not reach " + strconv.Itoa(n) + " lines; it holds:\n" + string(data))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// lineTypes returns the "type" of each transcript line.
func lineTypes(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		var v struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal([]byte(l), &v)
		out[i] = v.Type
	}
	return out
}

// checkTaskEvents checks the stream-json task events against the
// notifications the lead read: one task_started and one task_notification
// per agent, progress only in between, the same ids, statuses and files.
func checkTaskEvents(t *testing.T, s clitest.Streamed, uses []string, got map[string]clitest.Notice, status string) {
	t.Helper()
	started, finished := s.Events(task.SubtypeTaskStarted), s.Events(task.SubtypeTaskNotification)
	if len(started) != len(uses) || len(finished) != len(uses) {
		t.Fatalf("%d task_started and %d task_notification events, want %d of each", len(started), len(finished), len(uses))
	}
	byTool := map[string]task.Event{}
	for _, ev := range started {
		byTool[ev.ToolUseID] = ev
		if ev.TaskType != string(task.KindLocalAgent) || ev.IsBackgrounded == nil || !*ev.IsBackgrounded ||
			ev.SessionID != s.Result.SessionID || ev.UUID == "" {
			t.Errorf("task_started = %+v", ev)
		}
	}
	for _, ev := range finished {
		st, ok := byTool[ev.ToolUseID]
		n := got[ev.ToolUseID]
		if !ok || st.TaskID != ev.TaskID || n.TaskID != ev.TaskID {
			t.Errorf("task_notification %+v matches no task_started or notification", ev)
			continue
		}
		if ev.Status != status || ev.OutputFile != n.OutputFile || ev.Summary != n.Summary ||
			ev.Usage == nil || ev.Usage.TotalTokens <= 0 {
			t.Errorf("task_notification = %+v, notification = %+v", ev, n)
		}
	}
	// Per task: started first, notification last, progress in between.
	phase := map[string]int{} // 0 before started, 1 running, 2 notified
	for _, ev := range s.Tasks {
		switch ev.Subtype {
		case task.SubtypeTaskStarted:
			if phase[ev.TaskID] != 0 {
				t.Errorf("task %s started twice", ev.TaskID)
			}
			phase[ev.TaskID] = 1
		case task.SubtypeTaskProgress:
			if phase[ev.TaskID] != 1 || ev.Usage == nil || ev.ToolUseID == "" {
				t.Errorf("task_progress out of place or incomplete: %+v", ev)
			}
		case task.SubtypeTaskNotification:
			if phase[ev.TaskID] != 1 {
				t.Errorf("task_notification of %s out of place", ev.TaskID)
			}
			phase[ev.TaskID] = 2
		}
	}
	for _, ev := range started {
		if !hasProgress(s, ev.TaskID) {
			t.Errorf("task %s emitted no task_progress", ev.TaskID)
		}
	}
}

func hasProgress(s clitest.Streamed, id string) bool {
	for _, ev := range s.Events(task.SubtypeTaskProgress) {
		if ev.TaskID == id {
			return true
		}
	}
	return false
}

// chaosAgent is one background agent's script in TestBackgroundNotifyLoop.
type chaosAgent struct {
	turns  int             // model replies: turns-1 Read calls, then the final text
	sleeps []time.Duration // before each reply
	fail   int             // the turn whose request gets a 400 (-1: none)
	flaky  int             // the turn whose first attempt gets a 500 (-1: none)
}

func (a chaosAgent) status() string {
	if a.fail >= 0 {
		return "failed"
	}
	return "completed"
}

func newChaosAgent(rng *rand.Rand) chaosAgent {
	a := chaosAgent{turns: 1 + rng.IntN(3), fail: -1, flaky: -1}
	for range a.turns {
		a.sleeps = append(a.sleeps, time.Duration(rng.IntN(21))*time.Millisecond)
	}
	switch rng.IntN(5) {
	case 0:
		a.fail = rng.IntN(a.turns)
	case 1:
		a.flaky = rng.IntN(a.turns)
	}
	return a
}

// stopOutcome reads the lead's TaskStop result: a successful stop means
// the agent ends killed; a stop that lost the race to the agent's own end
// must say so with the status the agent ended with.
func stopOutcome(t *testing.T, hist []fakeapi.Message, planned string) string {
	t.Helper()
	ids := toolUseIDs(hist, "TaskStop")
	if len(ids) != 1 {
		t.Fatalf("the lead made %d TaskStop calls, want 1", len(ids))
	}
	res := resultBlocks(hist)[ids[0]]
	switch {
	case !res.IsError && strings.Contains(res.Text, "Successfully stopped task"):
		return "killed"
	case res.IsError && strings.Contains(res.Text, "is not running (status: "+planned+")"):
		return planned
	}
	t.Fatalf("TaskStop result %+v fits neither a stop nor a lost race with a %s agent", res, planned)
	return ""
}

// noticesByCall returns the ids of the lead's Agent calls, in order, and
// the notification the lead read for each, keyed by call id. It fails the
// test unless there are calls of each, every call has its notification,
// none came twice and the task ids are distinct.
func noticesByCall(t *testing.T, hist []fakeapi.Message, calls int) ([]string, map[string]clitest.Notice) {
	t.Helper()
	uses := toolUseIDs(hist, "Agent")
	got := map[string]clitest.Notice{}
	for _, n := range clitest.UserNotices(hist) {
		if _, dup := got[n.ToolUseID]; dup {
			t.Fatalf("notification for %s delivered twice", n.ToolUseID)
		}
		got[n.ToolUseID] = n
	}
	if len(uses) != calls || len(got) != calls {
		t.Fatalf("%d Agent calls and %d notifications, want %d of each: %+v", len(uses), len(got), calls, got)
	}
	tasks := map[string]bool{}
	for i, id := range uses {
		n, ok := got[id]
		if !ok {
			t.Fatalf("no notification for Agent call %d (%s): %+v", i, id, got)
		}
		tasks[n.TaskID] = true
	}
	if len(tasks) != calls {
		t.Fatalf("task ids are not distinct: %+v", got)
	}
	return uses, got
}

// chaos is one iteration of TestBackgroundNotifyLoop: five agents'
// scripts, the lead turns whose first attempt fails, and the agent the
// lead stops right after the launch (-1: none).
type chaos struct {
	iter      int
	plans     []chaosAgent
	leadFlaky map[int]bool
	victim    int
}

func newChaos(rng *rand.Rand, iter int) *chaos {
	c := &chaos{iter: iter, plans: make([]chaosAgent, 5), leadFlaky: map[int]bool{}, victim: -1}
	for i := range c.plans {
		c.plans[i] = newChaosAgent(rng)
	}
	for turn := range 7 {
		c.leadFlaky[turn] = rng.IntN(8) == 0
	}
	// The stop races the agent's own end; either outcome must be
	// consistent.
	if rng.IntN(3) == 0 {
		c.victim = rng.IntN(len(c.plans))
	}
	return c
}

// install routes the lead's and the agents' requests.
func (c *chaos) install(rt *clitest.Router, notes string) {
	var launches []fakeapi.Block
	for i := range c.plans {
		launches = append(launches, clitest.Use("Agent", map[string]any{
			"description": fmt.Sprintf("chaos %d", i), "run_in_background": true,
			"prompt": fmt.Sprintf("CHAOS-%d: do step work", i)}))
		rt.On(fmt.Sprintf("CHAOS-%d:", i), c.agentScript(i, notes))
	}
	rt.On("LEAD-chaos:", func(r *fakeapi.Request) fakeapi.Reply {
		if c.leadFlaky[r.Turn()] && r.Attempt == 1 {
			return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.ServerError, RetryAfterMs: "1"}}
		}
		switch {
		case r.Turn() == 0:
			return fakeapi.Reply{Content: launches}
		case r.Turn() == 1 && c.victim >= 0:
			launched := resultBlocks(r.Messages)[toolUseIDs(r.Messages, "Agent")[c.victim]]
			if m := clitest.AgentIDText.FindStringSubmatch(launched.Text); m != nil {
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("TaskStop", map[string]any{"task_id": m[1]})}}
			}
			return fakeapi.TextReply("no agent id in " + launched.Text)
		}
		return fakeapi.TextReply(fmt.Sprintf("seen %d of 5", len(clitest.UserNotices(r.Messages))))
	})
}

func (c *chaos) agentScript(i int, notes string) func(*fakeapi.Request) fakeapi.Reply {
	p := c.plans[i]
	return func(r *fakeapi.Request) fakeapi.Reply {
		turn := r.Turn()
		if turn >= p.turns {
			return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "agent ran past its script"}}
		}
		if !pause(r.Context(), p.sleeps[turn]) {
			return fakeapi.TextReply("cancelled")
		}
		switch {
		case turn == p.fail:
			return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: fmt.Sprintf("injected failure %d", i)}}
		case turn == p.flaky && r.Attempt == 1:
			return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.ServerError, RetryAfterMs: "1"}}
		case turn < p.turns-1:
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Read", map[string]any{"file_path": notes})}}
		}
		return fakeapi.TextReply(fmt.Sprintf("done %d/%d", i, c.iter))
	}
}

// check compares what the lead read, and what the stream reported, with
// the scripts: one notification per agent with the status it earned.
func (c *chaos) check(t *testing.T, hist []fakeapi.Message, s clitest.Streamed) {
	t.Helper()
	uses, got := noticesByCall(t, hist, len(c.plans))
	want := make([]string, len(c.plans))
	for i, p := range c.plans {
		want[i] = p.status()
	}
	if c.victim >= 0 {
		want[c.victim] = stopOutcome(t, hist, want[c.victim])
	}
	for i, id := range uses {
		n := got[id]
		if n.Status != want[i] {
			t.Errorf("agent %d: status %q, want %q: %+v", i, n.Status, want[i], n)
		}
		switch want[i] {
		case "killed":
			if n.Summary != fmt.Sprintf(`Agent "chaos %d" was stopped`, i) {
				t.Errorf("agent %d: killed notification %+v", i, n)
			}
		case "completed":
			if n.Result != fmt.Sprintf("done %d/%d", i, c.iter) {
				t.Errorf("agent %d: result %q", i, n.Result)
			}
		case "failed":
			if !strings.HasPrefix(n.Summary, fmt.Sprintf(`Agent "chaos %d" failed: `, i)) ||
				!strings.Contains(n.Summary, fmt.Sprintf("injected failure %d", i)) || n.Result != "" {
				t.Errorf("agent %d: failed notification %+v", i, n)
			}
		}
	}
	// The stream says the same ("stopped" for killed, as Claude Code's).
	finished := s.Events(task.SubtypeTaskNotification)
	if len(finished) != len(c.plans) {
		t.Errorf("%d task_notification events, want %d", len(finished), len(c.plans))
	}
	for _, ev := range finished {
		for i, id := range uses {
			st := strings.Replace(want[i], "killed", "stopped", 1)
			if ev.ToolUseID == id && (ev.Status != st || ev.TaskID != got[id].TaskID) {
				t.Errorf("agent %d: task_notification %+v, want status %s", i, ev, st)
			}
		}
	}
}

// fanOut scripts a lead (its first user text starts with lead) that starts
// n background agents — described "desc i", prompted "MARKER-i: task" — in
// its first turn, opens idle as it ends its second, and then answers each
// wake-up with how many notifications it has seen ("seen k of n").
func fanOut(rt *clitest.Router, lead, desc, marker, task string, n int, idle *gate) {
	var launches []fakeapi.Block
	for i := 1; i <= n; i++ {
		launches = append(launches, clitest.Use("Agent", map[string]any{
			"description": fmt.Sprintf("%s %d", desc, i), "run_in_background": true,
			"prompt": fmt.Sprintf("%s-%d: %s", marker, i, task)}))
	}
	rt.On(lead, func(r *fakeapi.Request) fakeapi.Reply {
		switch r.Turn() {
		case 0:
			return fakeapi.Reply{Content: launches}
		case 1:
			idle.open()
			return fakeapi.TextReply(fmt.Sprintf("%d agents are working", n))
		}
		return fakeapi.TextReply(fmt.Sprintf("seen %d of %d", len(clitest.UserNotices(r.Messages)), n))
	})
}
