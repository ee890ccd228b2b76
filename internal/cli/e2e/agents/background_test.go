package agents

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/task"
)

// TestFiveBackgroundAgentsNotifyOnce is issue 5's end-to-end test: the
// lead launches five background agents in one message and ends its turn;
// every later lead turn is started by notifications; the lead sees each
// agent's notification exactly once, with its result, and the run ends.
func TestFiveBackgroundAgentsNotifyOnce(t *testing.T) {
	t.Parallel()
	rt := &clitest.Router{}
	h := clitest.New(t, rt.Policy)
	notes := h.Write("notes.txt", "the notes\n")
	together := clitest.NewBarrier(5)
	leadIdle := newGate()

	fanOut(rt, "LEAD-five:", "helper", "SUB", "read the notes and report", 5, leadIdle)
	for i := 1; i <= 5; i++ {
		rt.On(fmt.Sprintf("SUB-%d:", i), helperScript(i, notes, together, leadIdle))
	}

	out, errOut, code := h.Run("-p", "LEAD-five: start five helpers", "--output-format", "stream-json")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	s := clitest.ParseStream(t, out)
	if s.Result.IsError || s.Result.Result != "seen 5 of 5" {
		t.Fatalf("result = %+v", s.Result)
	}

	// The lead model's view: every request after its first turn was
	// started by notifications, and the final history holds each once.
	leadReqs := clitest.ConvRequests(h.Srv, "LEAD-five:")
	for _, r := range leadReqs {
		if r.Turn() >= 2 && len(lastUserNotices(r)) == 0 {
			t.Errorf("lead request at turn %d carries no notification: %+v", r.Turn(), r.Messages[len(r.Messages)-1])
		}
	}
	hist := clitest.FinalHistory(t, h.Srv, "LEAD-five:")
	uses, got := noticesByCall(t, hist, 5)
	launched := resultBlocks(hist)
	for i, id := range uses {
		n := got[id]
		want := clitest.Notice{TaskID: n.TaskID, ToolUseID: id, OutputFile: n.OutputFile, Status: "completed",
			Summary:  fmt.Sprintf(`Agent "helper %d" completed`, i+1),
			Result:   fmt.Sprintf("report %d (read the notes: true)", i+1),
			HasUsage: true}
		if d := cmp.Diff(want, n); d != "" {
			t.Errorf("notification of agent %d (-want +got):\n%s", i+1, d)
		}
		if !strings.HasPrefix(n.TaskID, "a") || filepath.Base(n.OutputFile) != n.TaskID+".output" {
			t.Errorf("agent %d: task id %q, output file %q", i+1, n.TaskID, n.OutputFile)
		}
		if lr := launched[id]; lr.IsError || !strings.Contains(lr.Text, "running in the background") ||
			!strings.Contains(lr.Text, n.OutputFile) {
			t.Errorf("agent %d: launch result %+v does not point at %s", i+1, lr, n.OutputFile)
		}
	}
	checkTaskEvents(t, s, uses, got, "completed")
}

// helperScript is agent n's part in TestFiveBackgroundAgentsNotifyOnce: it
// reads the notes once all five agents run, and reports once the lead's
// first turn has ended, so that the notifications start new lead turns.
func helperScript(n int, notes string, together *clitest.Barrier, leadIdle *gate) func(*fakeapi.Request) fakeapi.Reply {
	return func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Read", map[string]any{"file_path": notes})}}
		}
		// The barrier is on the second request: the first ones start one
		// after the first sibling's first token (runtime/siblings.go).
		if !together.Wait(r.Context()) {
			return fakeapi.TextReply("the five agents did not run at the same time")
		}
		if !leadIdle.wait(r.Context()) {
			return fakeapi.TextReply("the lead never ended its first turn")
		}
		saw := strings.Contains(r.LastToolResultText(), "the notes")
		return fakeapi.TextReply(fmt.Sprintf("report %d (read the notes: %v)", n, saw))
	}
}

// TestBackgroundNotifyLoop runs the five-agent run with random agent
// lengths and delays, agents that fail on a non-retryable API error,
// requests (the lead's too) that succeed only on a retry, and in some runs
// a TaskStop racing an agent's end: every agent must notify exactly once
// with the right status, and no run may hang. It is a stress loop: 30
// iterations under clitest.StressEnv (.ci/run's stress step; 50 until
// 2026-12-07, cut for .ci/run's 25-minute budget: each provider's 30
// still take a fresh seed every CI run), one otherwise. Set COHORT_BG_SEED to replay a failing seed (with the same
// StressEnv, so that the iteration runs).
func TestBackgroundNotifyLoop(t *testing.T) {
	t.Parallel()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("COHORT_BG_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("COHORT_BG_SEED=%q: %v", s, err)
		}
	}
	t.Logf("seed %d (replay with COHORT_BG_SEED=%d)", seed, seed)
	// The iterations run as parallel subtests: -parallel (GOMAXPROCS by
	// default) bounds how many run at once.
	for iter := range clitest.Iterations(30, 1) {
		t.Run(fmt.Sprintf("iter%02d", iter), func(t *testing.T) {
			t.Parallel()
			chaosRun(t, rand.New(rand.NewPCG(seed, uint64(iter))), iter)
			if t.Failed() {
				t.Logf("replay with COHORT_BG_SEED=%d", seed)
			}
		})
	}
}

func chaosRun(t *testing.T, rng *rand.Rand, iter int) {
	rt := &clitest.Router{}
	h := clitest.New(t, rt.Policy)
	defer h.Srv.Close()
	c := newChaos(rng, iter)
	c.install(rt, h.Write("notes.txt", "the notes\n"))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("agents %+v, lead retries %v, stopped agent %d", c.plans, c.leadFlaky, c.victim)
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	out, errOut, code := h.RunCtx(ctx, "-p", "LEAD-chaos: start five helpers", "--output-format", "stream-json",
		"--allowedTools", "TaskStop")
	if ctx.Err() != nil {
		t.Fatalf("the run hung\nstdout: %s\nstderr: %s", out, errOut)
	}
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	s := clitest.ParseStream(t, out)
	if s.Result.Result != "seen 5 of 5" {
		t.Fatalf("result %+v", s.Result)
	}
	c.check(t, clitest.FinalHistory(t, h.Srv, "LEAD-chaos:"), s)
}

// TestTaskStopKillsABackgroundAgent stops a background agent while its
// Bash call runs and a background Bash command it started runs too:
// TaskStop returns only after both process groups are gone, the agent and
// its command end killed, and the lead is told exactly once.
func TestTaskStopKillsABackgroundAgent(t *testing.T) {
	t.Parallel()
	rt := &clitest.Router{}
	h := clitest.New(t, rt.Policy)
	sl := &sleeper{pidFile: filepath.Join(h.Dir, "sleeper.pid"), bgPidFile: filepath.Join(h.Dir, "background.pid")}
	sl.install(rt)
	out, errOut, code := h.Run("-p", "LEAD-stop: start and stop a sleeper", "--output-format", "stream-json",
		"--allowedTools", "Bash,TaskStop")
	if sl.leadErr != "" {
		t.Fatal(sl.leadErr)
	}
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	s := clitest.ParseStream(t, out)
	if s.Result.Result != "stopped the sleeper" {
		t.Fatalf("result = %+v", s.Result)
	}
	if len(sl.stopResult) != 1 || strings.HasPrefix(sl.stopResult[0], "ERROR:") ||
		!strings.Contains(sl.stopResult[0], "Successfully stopped task") {
		t.Fatalf("TaskStop result = %q", sl.stopResult)
	}
	if sl.pgid == 0 || sl.bgPgid == 0 || len(sl.survivors) > 0 {
		t.Fatalf("after TaskStop returned, the Bash process groups %d and %d still have members %v", sl.pgid, sl.bgPgid, sl.survivors)
	}
	// The notification came with the TaskStop result, and only then.
	if len(sl.stopNotes) != 1 {
		t.Fatalf("the request after TaskStop carries %d notifications, want 1", len(sl.stopNotes))
	}
	uses, got := noticesByCall(t, clitest.FinalHistory(t, h.Srv, "LEAD-stop:"), 1)
	n := got[uses[0]]
	want := clitest.Notice{TaskID: n.TaskID, ToolUseID: uses[0], OutputFile: n.OutputFile, Status: "killed",
		Summary: `Agent "long sleeper" was stopped`, HasUsage: true}
	if d := cmp.Diff(want, n); d != "" {
		t.Fatalf("notification (-want +got):\n%s", d)
	}
	if !strings.Contains(sl.stopResult[0], n.TaskID) {
		t.Errorf("TaskStop result %q does not name task %s", sl.stopResult[0], n.TaskID)
	}
	// The stream shows both tasks, the agent's command below the agent,
	// and both stopped.
	started := s.Events(task.SubtypeTaskStarted)
	if len(started) != 2 || started[0].TaskID != n.TaskID || started[1].TaskType != string(task.KindLocalBash) ||
		started[1].ParentTaskID != n.TaskID {
		t.Fatalf("task_started events = %+v, want the agent's, then its background command's", started)
	}
	stopped := map[string]string{}
	for _, ev := range s.Events(task.SubtypeTaskNotification) {
		stopped[ev.TaskID] = ev.Status
	}
	if d := cmp.Diff(map[string]string{started[0].TaskID: "stopped", started[1].TaskID: "stopped"}, stopped); d != "" {
		t.Fatalf("task_notification statuses (-want +got):\n%s", d)
	}
}

// sleeper scripts TestTaskStopKillsABackgroundAgent and records what the
// lead's policy observed.
type sleeper struct {
	pidFile, bgPidFile string

	pgid, bgPgid int
	stopResult   []string
	survivors    []int
	stopNotes    []clitest.Notice
	leadErr      string
}

func (sl *sleeper) install(rt *clitest.Router) {
	rt.On("LEAD-stop:", sl.lead)
	// The agent starts a background command, then runs a foreground one.
	rt.On("SLEEPER:", func(r *fakeapi.Request) fakeapi.Reply {
		switch r.Turn() {
		case 0:
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Bash", map[string]any{
				"command": "echo $$ > " + sl.bgPidFile + "; sleep 300", "run_in_background": true,
				"description": "background sleep"})}}
		case 1:
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Bash", map[string]any{
				"command": "echo $$ > " + sl.pidFile + "; sleep 300 & sleep 300; wait"})}}
		}
		return fakeapi.TextReply("the command ended by itself")
	})
}

func (sl *sleeper) lead(r *fakeapi.Request) fakeapi.Reply {
	switch r.Turn() {
	case 0:
		return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Agent", map[string]any{
			"description": "long sleeper", "run_in_background": true, "prompt": "SLEEPER: run the long command"})}}
	case 1:
		// The model knows the agent by the id in the launch result; it
		// stops the agent once both commands run.
		m := clitest.AgentIDText.FindStringSubmatch(r.LastToolResultText())
		if m == nil {
			sl.leadErr = "no agentId in the launch result: " + r.LastToolResultText()
			return fakeapi.TextReply("lost")
		}
		var err error
		if sl.bgPgid, err = awaitPID(r.Context(), sl.bgPidFile); err == nil {
			sl.pgid, err = awaitPID(r.Context(), sl.pidFile)
		}
		if err != nil {
			sl.leadErr = err.Error()
			return fakeapi.TextReply("lost")
		}
		return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("TaskStop", map[string]any{"task_id": m[1]})}}
	case 2:
		// TaskStop has returned: the commands must be gone already.
		sl.stopResult = clitest.ToolResults(r)
		sl.survivors = append(clitest.GroupMembers(sl.pgid), clitest.GroupMembers(sl.bgPgid)...)
		sl.stopNotes = lastUserNotices(r)
		return fakeapi.TextReply("stopped the sleeper")
	}
	return fakeapi.TextReply("unexpected turn")
}

// TestBackgroundOutputFileGrows looks at a background agent's output file
// twice while the agent is paused between requests: it is a private file
// of JSON lines, and it grows by appending.
func TestBackgroundOutputFileGrows(t *testing.T) {
	t.Parallel()
	rt := &clitest.Router{}
	h := clitest.New(t, rt.Policy)
	tr := newTranscriber()
	tr.home = h.Vars["COHORT_HOME"]
	tr.install(rt, h.Write("notes.txt", "the notes\n"))
	run := startCLI(t, h, "-p", "LEAD-file: start a transcriber", "--output-format", "json")
	var path string
	select {
	case path = <-tr.paths:
	case <-run.done:
		t.Fatalf("the run ended early: exit %d\n%s\n%s", run.code, run.stdout, run.stderr)
	case <-time.After(20 * time.Second):
		t.Fatal("the lead never saw the launch result")
	}
	if !strings.HasPrefix(path, filepath.Join(h.Vars["COHORT_HOME"], "tmp")+"/") {
		t.Fatalf("output file %q is not under $COHORT_HOME/tmp", path)
	}
	// At each pause the agent waits to send request k+2: the transcript
	// holds the opening prompt and k+1 replies and tool results.
	types := []string{"user", "assistant", "user", "assistant", "user"}
	var prev []string
	var prevSize int64
	for k, n := range []int{3, 5} {
		if !tr.paused[k].wait(t.Context()) {
			t.Fatalf("the agent never sent request %d", k+2)
		}
		lines, fi, err := transcriptLines(path, n)
		if err != nil {
			t.Fatal(err)
		}
		if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
			t.Fatalf("output file mode = %v, want a regular file with 0600", fi.Mode())
		}
		if got := lineTypes(lines); !cmp.Equal(got, types[:n]) || fi.Size() <= prevSize {
			t.Fatalf("pause %d: transcript lines %v (%d bytes, %d before), want %v:\n%s",
				k+1, got, fi.Size(), prevSize, types[:n], strings.Join(lines, "\n"))
		}
		if d := cmp.Diff(prev, lines[:len(prev)]); prev != nil && d != "" {
			t.Fatalf("earlier lines changed (-before +after):\n%s", d)
		}
		if !strings.Contains(lines[n-1], "the notes") {
			t.Errorf("the latest tool result is not in the transcript: %s", lines[n-1])
		}
		prev, prevSize = lines, fi.Size()
		tr.resume[k].open()
	}
	run.wait(t)
	if run.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", run.code, run.stdout, run.stderr)
	}
	if r := h.Result(run.stdout); r.Result != "transcript seen" {
		t.Fatalf("result = %+v", r)
	}
	// The lead looked at the file when the notification pointing at it
	// came: complete, and the agent's sidechain transcript itself, not a
	// second copy of the conversation.
	var look finalLook
	select {
	case look = <-tr.final:
	default:
		t.Fatal("the lead never got the notification")
	}
	if look.err != nil {
		t.Fatalf("the output file was not there when its notification came: %v", look.err)
	}
	if len(look.lines) != 6 || !strings.Contains(look.lines[5], "two reads done") {
		t.Fatalf("final transcript has %d lines, last %s", len(look.lines), look.lines[len(look.lines)-1])
	}
	got := clitest.UserNotices(clitest.FinalHistory(t, h.Srv, "LEAD-file:"))
	if len(got) != 1 || got[0].OutputFile != path || got[0].Status != "completed" {
		t.Fatalf("notifications = %+v, want one completed pointing at %s", got, path)
	}
	if len(look.sidechains) != 1 || !look.same {
		t.Fatalf("the output file %s is not the sidechain transcript %v", path, look.sidechains)
	}
	// Its notification delivered and the session over, the session's
	// temporary directory is gone, the file with it (issue 17 item 10);
	// the sidechain transcript stays.
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the output file outlived its session: %v", err)
	}
	if _, err := os.Stat(look.sidechains[0]); err != nil {
		t.Errorf("the sidechain transcript went with the output file: %v", err)
	}
}

// finalLook is what the lead of TestBackgroundOutputFileGrows saw of the
// output file when the notification came.
type finalLook struct {
	lines      []string
	sidechains []string
	same       bool // the output file is the sidechain transcript
	err        error
}

func lookAtOutput(home, path string) finalLook {
	lines, fi, err := transcriptLines(path, 6)
	if err != nil {
		return finalLook{err: err}
	}
	agentID := strings.TrimSuffix(filepath.Base(path), ".output")
	sidechains, _ := filepath.Glob(filepath.Join(home, "projects", "*", "*", "subagents", "agent-"+agentID+".jsonl"))
	look := finalLook{lines: lines, sidechains: sidechains}
	if len(sidechains) == 1 {
		side, err := os.Stat(sidechains[0])
		look.same = err == nil && os.SameFile(fi, side)
	}
	return look
}

// transcriber scripts TestBackgroundOutputFileGrows: the lead passes on
// the output file named in the launch result; the agent reads the notes
// twice and pauses before its second and third requests until resumed.
type transcriber struct {
	paths          chan string
	paused, resume [2]*gate
	home           string // COHORT_HOME
	path           string // the output file, once the lead has it
	final          chan finalLook
}

func newTranscriber() *transcriber {
	tr := &transcriber{paths: make(chan string, 1), final: make(chan finalLook, 1)}
	for k := range 2 {
		tr.paused[k], tr.resume[k] = newGate(), newGate()
	}
	return tr
}

func (tr *transcriber) install(rt *clitest.Router, notes string) {
	rt.On("LEAD-file:", func(r *fakeapi.Request) fakeapi.Reply {
		switch r.Turn() {
		case 0:
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Agent", map[string]any{
				"description": "transcriber", "run_in_background": true, "prompt": "TRANSCRIBER: read the notes twice"})}}
		case 1:
			path := ""
			if m := clitest.OutputText.FindStringSubmatch(r.LastToolResultText()); m != nil {
				path = m[1]
			}
			select {
			case tr.paths <- path:
				tr.path = path // requests of one conversation come one at a time
			default:
			}
			return fakeapi.TextReply("waiting for the transcriber")
		}
		select {
		case tr.final <- lookAtOutput(tr.home, tr.path):
		default:
		}
		return fakeapi.TextReply("transcript seen")
	})
	rt.On("TRANSCRIBER:", func(r *fakeapi.Request) fakeapi.Reply {
		turn := min(r.Turn(), 2)
		if turn > 0 {
			tr.paused[turn-1].open()
			if !tr.resume[turn-1].wait(r.Context()) {
				return fakeapi.TextReply("the test never looked")
			}
		}
		if turn < 2 {
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Read", map[string]any{"file_path": notes})}}
		}
		return fakeapi.TextReply("two reads done")
	})
}

// TestUnknownTaskIDListsRunningTasks gives TaskOutput and TaskStop ids that
// match nothing: each answers with an is_error result that lists what is
// running, so the model can correct itself; with nothing running it says so.
func TestUnknownTaskIDListsRunningTasks(t *testing.T) {
	t.Parallel()
	rt := &clitest.Router{}
	h := clitest.New(t, rt.Policy)
	release := newGate()
	var whileRunning, afterwards []string
	rt.On("LEAD-unknown:", func(r *fakeapi.Request) fakeapi.Reply {
		switch r.Turn() {
		case 0:
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Agent", map[string]any{
				"description": "blocked worker", "run_in_background": true, "prompt": "BLOCKED: wait for the signal"})}}
		case 1:
			return fakeapi.Reply{Content: []fakeapi.Block{
				clitest.Use("TaskOutput", map[string]any{"task_id": "a-nope"}),
				clitest.Use("TaskStop", map[string]any{"task_id": "b-nope"})}}
		case 2:
			whileRunning = clitest.ToolResults(r)
			release.open()
			return fakeapi.TextReply("waiting for the worker")
		case 3:
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("TaskStop", map[string]any{"task_id": "a-nope"})}}
		case 4:
			afterwards = clitest.ToolResults(r)
		}
		return fakeapi.TextReply("done")
	})
	rt.On("BLOCKED:", func(r *fakeapi.Request) fakeapi.Reply {
		if !release.wait(r.Context()) {
			return fakeapi.TextReply("never released")
		}
		return fakeapi.TextReply("worker finished")
	})

	out, errOut, code := h.Run("-p", "LEAD-unknown: ask about tasks that do not exist",
		"--output-format", "stream-json", "--allowedTools", "TaskStop")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	s := clitest.ParseStream(t, out)
	started := s.Events(task.SubtypeTaskStarted)
	if len(started) != 1 {
		t.Fatalf("%d task_started events, want 1", len(started))
	}
	listing := fmt.Sprintf("Running tasks:\n- %s (local_agent, running): blocked worker", started[0].TaskID)
	if len(whileRunning) != 2 {
		t.Fatalf("results while running = %q", whileRunning)
	}
	for i, id := range []string{"a-nope", "b-nope"} {
		res := whileRunning[i]
		if !strings.HasPrefix(res, "ERROR:") || !strings.Contains(res, fmt.Sprintf("No task found with id or name %q.", id)) ||
			!strings.Contains(res, listing) {
			t.Errorf("result for %s = %q, want an error listing %q", id, res, listing)
		}
	}
	if len(afterwards) != 1 || !strings.HasPrefix(afterwards[0], "ERROR:") || !strings.Contains(afterwards[0], "No tasks are running.") {
		t.Errorf("result with nothing running = %q", afterwards)
	}
	if notes := clitest.UserNotices(clitest.FinalHistory(t, h.Srv, "LEAD-unknown:")); len(notes) != 1 || notes[0].Status != "completed" {
		t.Errorf("notifications = %+v, want the worker's, once", notes)
	}
}

// TestTaskOutputBlockReadsTheResultOnce waits for a running background
// agent with TaskOutput: a short timeout reports it still running; a
// blocking read returns its result; and the notification that would have
// repeated that result is withdrawn, so the lead reads the result once.
func TestTaskOutputBlockReadsTheResultOnce(t *testing.T) {
	t.Parallel()
	rt := &clitest.Router{}
	h := clitest.New(t, rt.Policy)
	release := newGate()
	var agentID string
	var peek, final []string
	rt.On("LEAD-wait:", func(r *fakeapi.Request) fakeapi.Reply {
		switch r.Turn() {
		case 0:
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Agent", map[string]any{
				"description": "slow writer", "run_in_background": true, "prompt": "SLOW: write the report"})}}
		case 1:
			if m := clitest.AgentIDText.FindStringSubmatch(r.LastToolResultText()); m != nil {
				agentID = m[1]
			}
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("TaskOutput", map[string]any{
				"task_id": agentID, "block": true, "timeout": 50})}}
		case 2:
			peek = clitest.ToolResults(r)
			release.open()
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("TaskOutput", map[string]any{"task_id": agentID, "block": true})}}
		case 3:
			final = clitest.ToolResults(r)
			return fakeapi.TextReply("read the report")
		}
		return fakeapi.TextReply("an extra turn")
	})
	rt.On("SLOW:", func(r *fakeapi.Request) fakeapi.Reply {
		if !release.wait(r.Context()) {
			return fakeapi.TextReply("never released")
		}
		// Most likely answered while TaskOutput already waits; the outcome
		// must be the same either way.
		return fakeapi.Reply{Content: []fakeapi.Block{fakeapi.TextBlock("the report")}, FirstTokenDelay: 50 * time.Millisecond}
	})

	out, errOut, code := h.Run("-p", "LEAD-wait: wait for a slow writer", "--output-format", "stream-json")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	s := clitest.ParseStream(t, out)
	if s.Result.Result != "read the report" {
		t.Fatalf("result = %+v (an extra turn means a notification repeated the result)", s.Result)
	}
	started := s.Events(task.SubtypeTaskStarted)
	if agentID == "" || len(started) != 1 {
		t.Fatalf("agent id %q, %d task_started events", agentID, len(started))
	}
	id := started[0].TaskID
	// The running agent's messages as text, not its transcript's JSON.
	for _, w := range []string{"<retrieval_status>timeout</retrieval_status>", "<task_id>" + id + "</task_id>", "<status>running</status>",
		"<output>\n[prompt] SLOW: write the report\n</output>"} {
		if len(peek) != 1 || strings.HasPrefix(peek[0], "ERROR:") || !strings.Contains(peek[0], w) {
			t.Fatalf("TaskOutput with a short timeout = %q, want it to contain %q", peek, w)
		}
	}
	for _, w := range []string{"<retrieval_status>success</retrieval_status>", "<status>completed</status>", "<output>\nthe report\n</output>"} {
		if len(final) != 1 || strings.HasPrefix(final[0], "ERROR:") || !strings.Contains(final[0], w) {
			t.Fatalf("blocking TaskOutput = %q, want it to contain %q", final, w)
		}
	}
	if notes := clitest.UserNotices(clitest.FinalHistory(t, h.Srv, "LEAD-wait:")); len(notes) != 0 {
		t.Fatalf("the lead got %d notifications after reading the result through TaskOutput: %+v", len(notes), notes)
	}
	if n := len(clitest.ConvRequests(h.Srv, "LEAD-wait:")); n != 4 {
		t.Fatalf("the lead made %d requests, want 4", n)
	}
	// The stream still reports the task's end.
	if fin := s.Events(task.SubtypeTaskNotification); len(fin) != 1 || fin[0].TaskID != id || fin[0].Status != "completed" {
		t.Fatalf("task_notification events = %+v", fin)
	}
}

// TestStreamJSONResultIsLastWhenTasksAreKilled ends the lead (at its turn
// limit) while a background agent still runs. The session kills the agent
// on the way out; its task_notification must still come before the result
// line, which ends a stream-json run.
func TestStreamJSONResultIsLastWhenTasksAreKilled(t *testing.T) {
	t.Parallel()
	rt := &clitest.Router{}
	h := clitest.New(t, rt.Policy)
	rt.On("LEAD-limit:", func(r *fakeapi.Request) fakeapi.Reply {
		return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Agent", map[string]any{
			"description": "endless worker", "run_in_background": true, "prompt": "ENDLESS: keep going"})}}
	})
	rt.On("ENDLESS:", func(r *fakeapi.Request) fakeapi.Reply {
		<-r.Context().Done() // until the session kills the agent
		return fakeapi.TextReply("never read")
	})
	out, errOut, code := h.Run("-p", "LEAD-limit: start a worker", "--output-format", "stream-json", "--max-turns", "1")
	if code != 1 {
		t.Fatalf("exit %d, want 1 (turn limit)\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	s := clitest.ParseStream(t, out) // fails unless the result is the last line
	if s.Result.Subtype != "error_max_turns" {
		t.Fatalf("result = %+v", s.Result)
	}
	if fin := s.Events(task.SubtypeTaskNotification); len(fin) != 1 || fin[0].Status != "stopped" {
		t.Fatalf("task_notification events = %+v, want the killed worker's", fin)
	}
}

// delegatorAgent is an agent definition that lists Agent: the one way a
// subagent gets to start agents of its own.
const delegatorAgent = `---
name: delegator
description: Hands work on to agents of its own
tools: Agent, Bash, Read, Write, Edit, Glob, Grep
---
You hand work on to other agents and report what they found.
`

// TestBackgroundGrandchildResultIsNotLost has a subagent start a
// background agent of its own and finish first. The grandchild's
// notification goes to the subagent's queue; its result must reach a
// model (the subagent, kept alive for it, or the lead) rather than vanish.
func TestBackgroundGrandchildResultIsNotLost(t *testing.T) {
	t.Parallel()
	rt := &clitest.Router{}
	h := clitest.New(t, rt.Policy)
	// A subagent starts agents only when its definition lists Agent.
	h.Write(".cohort/agents/delegator.md", delegatorAgent)
	middleDone := newGate()
	rt.On("LEAD-nest:", func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Agent", map[string]any{
				"description": "middle manager", "prompt": "MIDDLE: delegate the work", "subagent_type": "delegator"})}}
		}
		return fakeapi.TextReply("lead done")
	})
	rt.On("MIDDLE:", func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Agent", map[string]any{
				"description": "grandchild", "prompt": "GRAND: do the work", "run_in_background": true})}}
		}
		middleDone.open()
		return fakeapi.TextReply("middle done")
	})
	rt.On("GRAND:", func(r *fakeapi.Request) fakeapi.Reply {
		if !middleDone.wait(r.Context()) {
			return fakeapi.TextReply("cancelled")
		}
		return fakeapi.TextReply("grand result")
	})
	out, errOut, code := h.Run("-p", "LEAD-nest: delegate", "--output-format", "stream-json")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	s := clitest.ParseStream(t, out)
	var grand []task.Event
	for _, ev := range s.Events(task.SubtypeTaskNotification) {
		if ev.Description == "" && strings.Contains(ev.Summary, `"grandchild"`) {
			grand = append(grand, ev)
		}
	}
	if len(grand) != 1 || grand[0].Status != "completed" {
		t.Fatalf("grandchild task_notification events = %+v, want one completed", grand)
	}
	delivered := 0
	for _, rec := range h.Srv.Requests() {
		if rec.Request == nil || rec.Status != 200 {
			continue
		}
		for _, n := range lastUserNotices(rec.Request) {
			if n.TaskID == grand[0].TaskID && n.Result == "grand result" {
				delivered++
			}
		}
	}
	if delivered != 1 {
		t.Fatalf("the grandchild's result reached a model %d times, want 1", delivered)
	}
}
