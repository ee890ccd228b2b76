package task

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cohort-dev/cohort/llm"
)

func TestStartCompleteNotify(t *testing.T) {
	r, rec := newReg(t, func(c *Config) { c.ProgressInterval = -1 })
	q := NewQueue()
	tk, err := r.Start(t.Context(), Spec{
		Kind: KindLocalAgent, Description: "Audit auth", Prompt: "look", ToolUseID: "toolu_1",
		AgentID: "agent-1", Background: true, Queue: q,
	}, func(ctx context.Context, tk *Task) (Outcome, error) {
		tk.Output().WriteLine("transcript line")
		tk.RecordUsage(llm.Usage{InputTokens: 100, CacheReadInputTokens: 50, OutputTokens: 10})
		tk.RecordToolUse("Read", "auth.go")
		tk.RecordUsage(llm.Usage{InputTokens: 300, OutputTokens: 20})
		return Outcome{Text: "all good", WorktreePath: "/wt", WorktreeBranch: "cohort/x"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	st := waitDoneT(t, tk)
	if st.Status != StatusCompleted || !st.Notified || st.Result.Text != "all good" || st.EndTime.IsZero() {
		t.Fatalf("state %+v", st)
	}
	wantRes := Result{Text: "all good", TotalTokens: 330, ToolUses: 1, WorktreePath: "/wt", WorktreeBranch: "cohort/x"}
	if diff := cmp.Diff(wantRes, *st.Result, cmpopts.IgnoreFields(Result{}, "Duration")); diff != "" {
		t.Fatalf("result (-want +got):\n%s", diff)
	}
	items := q.Drain()
	if len(items) != 1 || items[0].Kind != ItemNotification {
		t.Fatalf("queue %+v", items)
	}
	n := items[0].Notification
	want := Notification{
		TaskID: tk.ID(), Kind: KindLocalAgent, ToolUseID: "toolu_1", OutputFile: st.OutputFile,
		Status: StatusCompleted, Summary: `Agent "Audit auth" completed`, Result: "all good",
		Usage:        &Usage{TotalTokens: 330, ToolUses: 1, DurationMs: st.Result.Duration.Milliseconds()},
		WorktreePath: "/wt", WorktreeBranch: "cohort/x",
	}
	if diff := cmp.Diff(want, *n); diff != "" {
		t.Fatalf("notification (-want +got):\n%s", diff)
	}
	wantPath := filepath.Join(r.Dir(), tk.ID()+".output")
	if st.OutputFile != wantPath || !strings.HasSuffix(filepath.Dir(wantPath), filepath.Join("tmp", "sess-1", "tasks")) {
		t.Fatalf("output file %s", st.OutputFile)
	}
	if b, _ := os.ReadFile(st.OutputFile); string(b) != "transcript line\n" {
		t.Fatalf("output file holds %q", b)
	}
	got := rec.ofTask(tk.ID())
	wantEv := []string{SubtypeTaskStarted, SubtypeTaskProgress, SubtypeTaskProgress, SubtypeTaskProgress, SubtypeTaskUpdated, SubtypeTaskNotification}
	if diff := cmp.Diff(wantEv, got); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
}

// The JSON of each event subtype, with the volatile fields blanked.
func TestEventJSON(t *testing.T) {
	r, rec := newReg(t, func(c *Config) { c.ProgressInterval = -1; c.Rand = seeded(7) })
	q := NewQueue()
	exit := 0
	tk, err := r.Start(t.Context(), Spec{
		Kind: KindLocalBash, Command: "go test ./...", Description: "Run tests", ToolUseID: "toolu_9",
		Background: true, Queue: q,
	}, func(ctx context.Context, tk *Task) (Outcome, error) {
		tk.RecordToolUse("Bash", "go test")
		return Outcome{ExitCode: &exit}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	waitDoneT(t, tk)
	var lines []string
	for _, e := range rec.events() {
		if e.UUID == "" || e.SessionID != "sess-1" || e.Type != "system" {
			t.Fatalf("event lacks envelope: %+v", e)
		}
		e.UUID = "U"
		if e.Usage != nil {
			e.Usage.DurationMs = 0
		}
		e.OutputFile = strings.TrimPrefix(e.OutputFile, r.Dir())
		if e.Patch != nil {
			e.Patch.EndTime = 1
		}
		b, _ := json.Marshal(e)
		lines = append(lines, string(b))
	}
	id := tk.ID()
	want := []string{
		`{"type":"system","subtype":"task_started","task_id":"` + id + `","tool_use_id":"toolu_9","description":"Run tests","task_type":"local_bash","is_backgrounded":true,"uuid":"U","session_id":"sess-1"}`,
		`{"type":"system","subtype":"background_tasks_changed","tasks":[{"task_id":"` + id + `","task_type":"local_bash","description":"Run tests"}],"uuid":"U","session_id":"sess-1"}`,
		`{"type":"system","subtype":"task_progress","task_id":"` + id + `","tool_use_id":"toolu_9","description":"Run tests","usage":{"total_tokens":0,"tool_uses":1,"duration_ms":0},"last_tool_name":"Bash","uuid":"U","session_id":"sess-1"}`,
		`{"type":"system","subtype":"task_updated","task_id":"` + id + `","patch":{"status":"completed","end_time":1},"uuid":"U","session_id":"sess-1"}`,
		`{"type":"system","subtype":"task_notification","task_id":"` + id + `","tool_use_id":"toolu_9","status":"completed","output_file":"/` + id + `.output","summary":"Background command \"Run tests\" completed (exit code 0)","uuid":"U","session_id":"sess-1"}`,
		`{"type":"system","subtype":"background_tasks_changed","uuid":"U","session_id":"sess-1"}`,
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Fatalf("events (-want +got):\n%s", diff)
	}
}

func TestFailurePanicAndExitCode(t *testing.T) {
	r, rec := newReg(t, nil)
	q := NewQueue()
	exit := 3
	runs := map[string]RunFunc{
		"error": func(context.Context, *Task) (Outcome, error) { return Outcome{}, errors.New("model API error 500") },
		"panic": func(context.Context, *Task) (Outcome, error) { panic("kaboom") },
		"exit":  func(context.Context, *Task) (Outcome, error) { return Outcome{ExitCode: &exit}, nil },
	}
	want := map[string]string{
		"error": `Agent "error" failed: model API error 500`,
		"panic": `Agent "panic" failed: task `,
		"exit":  `Background command "exit" failed with exit code 3`,
	}
	for name, run := range runs {
		kind := KindLocalAgent
		if name == "exit" {
			kind = KindLocalBash
		}
		tk, err := r.Start(t.Context(), Spec{Kind: kind, Description: name, Background: true, Queue: q}, run)
		if err != nil {
			t.Fatal(err)
		}
		st := waitDoneT(t, tk)
		if st.Status != StatusFailed || st.Err == "" {
			t.Errorf("%s: status %s err %q", name, st.Status, st.Err)
		}
		items := q.Drain()
		if len(items) != 1 || !strings.HasPrefix(items[0].Notification.Summary, want[name]) {
			t.Errorf("%s: notifications %+v", name, items)
		}
		evs := rec.ofTask(tk.ID())
		if evs[len(evs)-1] != SubtypeTaskNotification {
			t.Errorf("%s: last event %s", name, evs[len(evs)-1])
		}
		if name == "panic" {
			if b, _ := os.ReadFile(st.OutputFile); !strings.Contains(string(b), "panic: kaboom") {
				t.Errorf("panic not in transcript: %q", b)
			}
		}
	}
}

func TestStartValidation(t *testing.T) {
	r, _ := newReg(t, nil)
	ok := done("x")
	tests := []struct {
		name string
		spec Spec
		run  RunFunc
		want string
	}{
		{"kind", Spec{Kind: "shell", Description: "d"}, ok, "unknown kind"},
		{"desc", Spec{Kind: KindLocalAgent}, ok, "description is empty"},
		{"run", Spec{Kind: KindLocalAgent, Description: "d"}, nil, "run function is nil"},
	}
	for _, tc := range tests {
		if _, err := r.Start(t.Context(), tc.spec, tc.run); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want %q", tc.name, err, tc.want)
		}
	}
	// A bash task without a description is described by its command.
	tk, err := r.Start(t.Context(), Spec{Kind: KindLocalBash, Command: "make"}, ok)
	if err != nil || tk.State().Description != "make" {
		t.Fatalf("bash fallback: %v %+v", err, tk)
	}
	waitDoneT(t, tk)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := r.Start(ctx, Spec{Kind: KindLocalAgent, Description: "d", Linked: true}, ok); !errors.Is(err, context.Canceled) {
		t.Fatalf("linked start with a dead ctx: %v", err)
	}
}

func TestNewRegistryValidation(t *testing.T) {
	home := t.TempDir()
	for _, sid := range []string{"", "../x", "a/b", ".hidden", "a b"} {
		if _, err := NewRegistry(Config{Home: home, SessionID: sid}); err == nil {
			t.Errorf("session id %q accepted", sid)
		}
	}
	if _, err := NewRegistry(Config{SessionID: "s"}); err == nil {
		t.Error("empty home accepted")
	}
	// A planted link anywhere under COHORT_HOME/tmp is refused.
	elsewhere := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "tmp"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(home, "tmp", "evil")); err != nil {
		t.Fatal(err)
	}
	if _, err := NewRegistry(Config{Home: home, SessionID: "evil"}); !errors.Is(err, ErrSymlink) {
		t.Fatalf("linked session dir: %v", err)
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "tasks")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("created a directory through the link")
	}
	r, err := NewRegistry(Config{Home: home, SessionID: "good"})
	if err != nil {
		t.Fatal(err)
	}
	defer closeReg(t, r)
	for _, d := range []string{"tmp/good", "tmp/good/tasks"} {
		fi, err := os.Stat(filepath.Join(home, d))
		if err != nil || fi.Mode().Perm() != 0o700 {
			t.Fatalf("%s: %v %v", d, fi.Mode(), err)
		}
	}
}

// A link planted where the next task's output file will go is refused,
// not followed.
func TestStartRefusesPlantedSymlink(t *testing.T) {
	home := t.TempDir()
	// Learn the first id the seeded source yields.
	probe, _ := newReg(t, func(c *Config) { c.Home = home; c.SessionID = "probe"; c.Rand = seeded(42) })
	tk, err := probe.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "d"}, done(""))
	if err != nil {
		t.Fatal(err)
	}
	waitDoneT(t, tk)
	victim := filepath.Join(t.TempDir(), "victim")
	dir := filepath.Join(home, "tmp", "real", "tasks")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, tk.ID()+".output")); err != nil {
		t.Fatal(err)
	}
	r, _ := newReg(t, func(c *Config) { c.Home = home; c.SessionID = "real"; c.Rand = seeded(42) })
	_, err = r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "d"}, done(""))
	if !errors.Is(err, ErrSymlink) {
		t.Fatalf("Start over a planted link: %v", err)
	}
	if _, err := os.Stat(victim); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the link was followed")
	}
	if len(r.List()) != 0 {
		t.Fatal("a task was registered")
	}
}

// An id whose output file already exists (an earlier run of the session)
// is skipped, not reused.
func TestStartSkipsUsedIDs(t *testing.T) {
	home := t.TempDir()
	first, _ := newReg(t, func(c *Config) { c.Home = home; c.Rand = seeded(5) })
	a, err := first.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "d"}, done(""))
	if err != nil {
		t.Fatal(err)
	}
	waitDoneT(t, a)
	second, _ := newReg(t, func(c *Config) { c.Home = home; c.Rand = seeded(5) })
	b, err := second.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "d"}, done(""))
	if err != nil {
		t.Fatal(err)
	}
	waitDoneT(t, b)
	if a.ID() == b.ID() {
		t.Fatalf("id %s reused", a.ID())
	}
}

func TestLookupByNameAndAgent(t *testing.T) {
	r, _ := newReg(t, nil)
	release := make(chan struct{})
	tk, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "d", Name: "alice", AgentID: "agent-7", Background: true}, block(release, ""))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{tk.ID(), "alice", "agent-7"} {
		if got, ok := r.Get(key); !ok || got != tk {
			t.Errorf("Get(%q) = %v, %v", key, got, ok)
		}
	}
	if _, ok := r.Get("bob"); ok {
		t.Error("Get(bob) found something")
	}
	if _, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "d2", Name: "alice"}, done("")); !errors.Is(err, ErrNameTaken) {
		t.Fatalf("duplicate running name: %v", err)
	}
	close(release)
	waitDoneT(t, tk)
	// Once alice is finished, the name can be taken by a new task.
	tk2, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "d3", Name: "alice"}, done(""))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := r.Get("alice"); got != tk2 {
		t.Fatal("name does not point at the newest task")
	}
	waitDoneT(t, tk2)
	if _, err := r.Wait(t.Context(), "nobody"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Wait(unknown) = %v", err)
	}
	if _, err := r.Stop(t.Context(), "nobody"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Stop(unknown) = %v", err)
	}
}

func TestSnapshotsAreCopies(t *testing.T) {
	r, _ := newReg(t, nil)
	release := make(chan struct{})
	tk, err := r.Start(t.Context(), Spec{Kind: KindDream, Description: "dream", Background: true}, func(ctx context.Context, tk *Task) (Outcome, error) {
		tk.SetPhase("starting")
		for i := range 20 {
			tk.RecordToolUse("Read", "f")
			tk.SetDetail(i)
		}
		tk.SetPhase("updating")
		<-release
		return Outcome{Text: "done"}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 50 {
		st := tk.State()
		if len(st.Progress.Activities) > activityRing {
			t.Fatal("activities exceed the ring")
		}
		if len(st.Progress.Activities) > 0 {
			st.Progress.Activities[0].Tool = "mutated"
		}
	}
	close(release)
	st := waitDoneT(t, tk)
	if st.Phase != "updating" || st.Detail != 19 || st.Progress.ToolUses != 20 || len(st.Progress.Activities) != activityRing {
		t.Fatalf("state %+v", st)
	}
	for _, a := range st.Progress.Activities {
		if a.Tool != "Read" {
			t.Fatal("a snapshot's mutation leaked into the task")
		}
	}
	st.Result.Text = "changed"
	if tk.State().Result.Text != "done" {
		t.Fatal("Result is shared")
	}
}

// TestOutstandingCoversTheNotification checks the order a waiter relies on:
// a background task stops counting as outstanding only once its
// notification is in the queue, so "nothing outstanding, queue empty" never
// loses a notification.
func TestOutstandingCoversTheNotification(t *testing.T) {
	r, _ := newReg(t, nil)
	q := NewQueue()
	for i := range 200 {
		release := make(chan struct{})
		_, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "d", Background: true, Queue: q},
			func(ctx context.Context, _ *Task) (Outcome, error) { <-release; return Outcome{Text: "ok"}, nil })
		if err != nil {
			t.Fatal(err)
		}
		close(release)
		for {
			out := r.Outstanding(q)
			if n := q.Len(); n > 0 {
				q.Drain()
				break
			}
			if out == 0 {
				t.Fatalf("iteration %d: nothing outstanding and nothing queued: the notification was lost", i)
			}
		}
	}
}

// Registered runs once, with the registered task, before task_started is
// emitted and before the body runs: a caller that publishes the task there
// is never seen running without it.
func TestRegisteredComesFirst(t *testing.T) {
	var order []string
	var mu sync.Mutex
	note := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		order = append(order, s)
	}
	var got *Task
	r, _ := newReg(t, func(c *Config) {
		c.OnEvent = func(ev Event) {
			if ev.Subtype == SubtypeTaskStarted {
				note("started")
			}
		}
	})
	tk, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "d", Background: true,
		Registered: func(tk *Task) { got = tk; note("registered") }},
		func(ctx context.Context, tk *Task) (Outcome, error) { note("run"); return Outcome{}, nil })
	if err != nil {
		t.Fatal(err)
	}
	waitDoneT(t, tk)
	mu.Lock()
	defer mu.Unlock()
	if got != tk || !slices.Equal(order, []string{"registered", "started", "run"}) {
		t.Fatalf("Registered got %p (task %p); order %v", got, tk, order)
	}
}
