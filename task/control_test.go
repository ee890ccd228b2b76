package task

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// Stop returns only after run has returned (so its resources are
// released), and the task ends killed with a notification.
func TestStopWaitsForRun(t *testing.T) {
	r, rec := newReg(t, nil)
	q := NewQueue()
	var cleaned atomic.Bool
	tk, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "slow", Background: true, Queue: q},
		func(ctx context.Context, tk *Task) (Outcome, error) {
			<-ctx.Done()
			time.Sleep(20 * time.Millisecond) // e.g. reaping a process group
			cleaned.Store(true)
			return Outcome{Text: "partial"}, ctx.Err()
		})
	if err != nil {
		t.Fatal(err)
	}
	st, err := r.Stop(t.Context(), tk.ID())
	if err != nil {
		t.Fatal(err)
	}
	if !cleaned.Load() {
		t.Fatal("Stop returned before run did")
	}
	if st.Status != StatusKilled || st.Err != "stopped by request" {
		t.Fatalf("state %s %q", st.Status, st.Err)
	}
	items := q.Drain()
	if len(items) != 1 || items[0].Notification.Status != StatusKilled || items[0].Notification.Summary != `Agent "slow" was stopped` {
		t.Fatalf("notifications %+v", items)
	}
	// The task's end, then the background set without it.
	evs := rec.events()
	if n := len(evs); n < 3 || evs[n-3].Subtype != SubtypeTaskUpdated || evs[n-3].Patch.Status != "killed" ||
		evs[n-2].Subtype != SubtypeTaskNotification || evs[n-2].Status != "stopped" ||
		evs[n-1].Subtype != SubtypeBackgroundTasksChanged || len(evs[n-1].Tasks) != 0 {
		t.Fatalf("last events %+v", evs)
	}
	if _, err := r.Stop(t.Context(), tk.ID()); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("second Stop = %v", err)
	}
}

func TestStopTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, _ := newReg(t, func(c *Config) { c.StopTimeout = 5 * time.Second })
		release := make(chan struct{})
		tk, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "stubborn", Background: true},
			func(ctx context.Context, _ *Task) (Outcome, error) {
				<-release // ignores ctx
				return Outcome{}, nil
			})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		st, err := r.Stop(t.Context(), tk.ID())
		if !errors.Is(err, ErrStopTimeout) || time.Since(start) != 5*time.Second || st.Status != StatusRunning {
			t.Fatalf("Stop = %v after %s, status %s", err, time.Since(start), st.Status)
		}
		close(release)
		if st := waitDoneT(t, tk); st.Status != StatusKilled {
			t.Fatalf("a task that was told to stop ended %s", st.Status)
		}
		closeReg(t, r)
	})
}

// Stopping a task stops its whole subtree, including children of children
// and tasks registered by parent agent id; siblings keep running.
func TestStopCascades(t *testing.T) {
	r, _ := newReg(t, nil)
	wait := func(ctx context.Context, _ *Task) (Outcome, error) { <-ctx.Done(); return Outcome{}, ctx.Err() }
	start := func(s Spec) *Task {
		t.Helper()
		s.Kind, s.Background = KindLocalAgent, true
		tk, err := r.Start(t.Context(), s, wait)
		if err != nil {
			t.Fatal(err)
		}
		return tk
	}
	root := start(Spec{Description: "root", AgentID: "ag-root"})
	child := start(Spec{Description: "child", ParentAgentID: "ag-root", AgentID: "ag-child"})
	grand := start(Spec{Description: "grand", ParentID: child.ID()})
	sibling := start(Spec{Description: "sibling"})
	if child.State().ParentID != root.ID() {
		t.Fatalf("parent agent id not resolved: %q", child.State().ParentID)
	}
	if _, err := r.Stop(t.Context(), "ag-root"); err != nil {
		t.Fatal(err)
	}
	for _, tk := range []*Task{root, child, grand} {
		select {
		case <-tk.Done():
		default:
			t.Fatalf("%s still running after Stop returned", tk.State().Description)
		}
		if st := tk.State(); st.Status != StatusKilled {
			t.Fatalf("%s: %s", st.Description, st.Status)
		}
	}
	if grand.State().Err != "its parent task was stopped" {
		t.Fatalf("grandchild reason %q", grand.State().Err)
	}
	if sibling.State().Status != StatusRunning {
		t.Fatal("sibling was stopped")
	}
	// A stopped parent cannot gain children; one that completed can (a
	// resumed agent, say).
	if _, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "late", ParentID: root.ID()}, wait); !errors.Is(err, ErrParentStopping) {
		t.Fatalf("child of a killed parent: %v", err)
	}
	finished, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "finished"}, done(""))
	if err != nil {
		t.Fatal(err)
	}
	waitDoneT(t, finished)
	late, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "late", ParentID: finished.ID()}, done(""))
	if err != nil {
		t.Fatalf("child of a completed parent: %v", err)
	}
	waitDoneT(t, late)
}

func TestStartUnderStoppingParent(t *testing.T) {
	r, _ := newReg(t, nil)
	release := make(chan struct{})
	parent, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "p", Background: true},
		func(ctx context.Context, _ *Task) (Outcome, error) { <-release; return Outcome{}, nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Kill(parent.ID()); err != nil {
		t.Fatal(err)
	}
	_, err = r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "c", ParentID: parent.ID()}, done(""))
	if !errors.Is(err, ErrParentStopping) {
		t.Fatalf("Start under a stopping parent = %v", err)
	}
	close(release)
	waitDoneT(t, parent)
}

// Kill racing completion: every task ends in exactly one terminal state
// and sends exactly one notification and one notification event.
func TestKillCompleteRace(t *testing.T) {
	r, rec := newReg(t, nil)
	q := NewQueue()
	const n = 300
	tasks := make([]*Task, n)
	gate := make(chan struct{})
	for i := range tasks {
		tk, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: fmt.Sprint(i), Background: true, Queue: q},
			func(ctx context.Context, _ *Task) (Outcome, error) { <-gate; return Outcome{Text: "ok"}, nil })
		if err != nil {
			t.Fatal(err)
		}
		tasks[i] = tk
	}
	var wg sync.WaitGroup
	for _, tk := range tasks {
		for range 3 {
			wg.Go(func() {
				<-gate
				err := r.Kill(tk.ID())
				if err != nil && !errors.Is(err, ErrNotRunning) {
					t.Error(err)
				}
				r.Background(tk.ID())
			})
		}
	}
	close(gate)
	wg.Wait()
	counts := map[Status]int{}
	for _, tk := range tasks {
		st := waitDoneT(t, tk)
		counts[st.Status]++
		if err := tk.background(true); !errors.Is(err, ErrNotRunning) {
			t.Fatalf("Background of a terminal task = %v", err)
		}
		if err := r.Kill(tk.ID()); !errors.Is(err, ErrNotRunning) {
			t.Fatalf("Kill of a terminal task = %v", err)
		}
		if tk.State().Status != st.Status {
			t.Fatal("terminal state changed")
		}
	}
	if counts[StatusCompleted]+counts[StatusKilled] != n {
		t.Fatalf("states %v", counts)
	}
	assertOneNotificationEach(t, q, rec, tasks)
	t.Logf("completed %d, killed %d", counts[StatusCompleted], counts[StatusKilled])
}

func assertOneNotificationEach(t *testing.T, q *Queue, rec *recorder, tasks []*Task) {
	t.Helper()
	seen := map[string]int{}
	for _, it := range q.Drain() {
		seen[it.Notification.TaskID]++
		if st, _ := findState(tasks, it.Notification.TaskID); st.Status != it.Notification.Status {
			t.Fatalf("notification status %s, task %s", it.Notification.Status, st.Status)
		}
	}
	events := map[string]int{}
	for _, e := range rec.events() {
		if e.Subtype == SubtypeTaskNotification {
			events[e.TaskID]++
		}
	}
	for _, tk := range tasks {
		if seen[tk.ID()] != 1 || events[tk.ID()] != 1 {
			t.Fatalf("task %s: %d notifications, %d notification events", tk.ID(), seen[tk.ID()], events[tk.ID()])
		}
	}
}

func findState(tasks []*Task, id string) (State, bool) {
	for _, tk := range tasks {
		if tk.ID() == id {
			return tk.State(), true
		}
	}
	return State{}, false
}

// A thousand tasks started and stopped from many goroutines at once.
func TestThousandTasks(t *testing.T) {
	r, rec := newReg(t, nil)
	q := NewQueue()
	const n = 1000
	tasks := make([]*Task, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			tk, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: fmt.Sprint(i), Background: true, Queue: q},
				func(ctx context.Context, tk *Task) (Outcome, error) {
					tk.RecordToolUse("Read", "x")
					if i%2 == 0 {
						return Outcome{Text: "quick"}, nil
					}
					<-ctx.Done()
					return Outcome{}, ctx.Err()
				})
			if err != nil {
				t.Error(err)
				return
			}
			tasks[i] = tk
			if i%3 == 0 {
				if _, err := r.Stop(t.Context(), tk.ID()); err != nil && !errors.Is(err, ErrNotRunning) {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	closeReg(t, r) // kills the rest and waits
	for _, tk := range tasks {
		if st := tk.State(); !st.Status.Terminal() || !st.Notified {
			t.Fatalf("task %s: %s notified=%v", st.ID, st.Status, st.Notified)
		}
	}
	assertOneNotificationEach(t, q, rec, tasks)
	if _, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "x"}, done("")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Start after Close = %v", err)
	}
}

// A foreground task's result comes back through Await and is not
// enqueued.
func TestForegroundCompletes(t *testing.T) {
	r, _ := newReg(t, nil)
	q := NewQueue()
	tk, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "sync", Linked: true, Queue: q}, done("answer"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := tk.Await(t.Context())
	if err != nil || st.Status != StatusCompleted || st.Result.Text != "answer" || st.IsBackgrounded {
		t.Fatalf("Await = %+v, %v", st, err)
	}
	<-tk.Done()
	if q.Len() != 0 || !tk.State().Notified {
		t.Fatalf("foreground task enqueued %d items, notified=%v", q.Len(), tk.State().Notified)
	}
}

// Moving a running foreground task to the background wakes its waiter with
// ErrBackgrounded; the task keeps running, outlives the caller's ctx, and
// notifies once when it ends.
func TestBackgroundFlip(t *testing.T) {
	r, _ := newReg(t, nil)
	q := NewQueue()
	callerCtx, endTurn := context.WithCancel(t.Context())
	release := make(chan struct{})
	tk, err := r.Start(callerCtx, Spec{Kind: KindLocalAgent, Description: "flip", Linked: true, Queue: q}, block(release, "late answer"))
	if err != nil {
		t.Fatal(err)
	}
	awaited := make(chan error, 1)
	go func() { _, err := tk.Await(callerCtx); awaited <- err }()
	if r.Outstanding(q) != 0 {
		t.Fatal("a foreground task counted as outstanding")
	}
	if err := r.Background(tk.ID()); err != nil {
		t.Fatal(err)
	}
	if r.Outstanding(q) != 1 || r.Outstanding(NewQueue()) != 0 {
		t.Fatal("Outstanding does not count the backgrounded task for its queue only")
	}
	if err := <-awaited; !errors.Is(err, ErrBackgrounded) {
		t.Fatalf("Await = %v, want ErrBackgrounded", err)
	}
	if err := r.Background(tk.ID()); err != nil {
		t.Fatalf("second Background = %v", err)
	}
	endTurn() // the sync Agent call returned async_launched; its turn ends
	if st := tk.State(); st.Status != StatusRunning || !st.IsBackgrounded {
		t.Fatalf("after the turn ended: %s backgrounded=%v", st.Status, st.IsBackgrounded)
	}
	close(release)
	st := waitDoneT(t, tk)
	if st.Status != StatusCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Err)
	}
	if r.Outstanding(q) != 0 {
		t.Fatal("a finished task counted as outstanding")
	}
	items := q.Drain()
	if len(items) != 1 || items[0].Notification.Result != "late answer" {
		t.Fatalf("notifications %+v", items)
	}
	if _, err := tk.Await(t.Context()); !errors.Is(err, ErrBackgrounded) {
		t.Fatalf("Await after a backgrounded completion = %v; the result must not be delivered twice", err)
	}
}

// A linked foreground task dies with its caller's ctx.
func TestLinkedCancellation(t *testing.T) {
	r, _ := newReg(t, nil)
	q := NewQueue()
	ctx, cancel := context.WithCancel(t.Context())
	tk, err := r.Start(ctx, Spec{Kind: KindLocalAgent, Description: "sync", Linked: true, Queue: q}, block(nil, ""))
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	st := waitDoneT(t, tk)
	if st.Status != StatusKilled || st.Err != "the turn that started it was cancelled" {
		t.Fatalf("state %s %q", st.Status, st.Err)
	}
	if q.Len() != 0 {
		t.Fatal("a foreground kill was enqueued")
	}
	// An unlinked background task ignores the caller's ctx.
	ctx2, cancel2 := context.WithCancel(t.Context())
	release := make(chan struct{})
	bg, err := r.Start(ctx2, Spec{Kind: KindLocalAgent, Description: "bg", Background: true}, block(release, ""))
	if err != nil {
		t.Fatal(err)
	}
	cancel2()
	if bg.State().Status != StatusRunning {
		t.Fatal("background task followed the caller's ctx")
	}
	close(release)
	waitDoneT(t, bg)
}

func TestAutoBackground(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, _ := newReg(t, nil)
		q := NewQueue()
		release := make(chan struct{})
		tk, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "long", Linked: true, Queue: q, AutoBackground: 120 * time.Second},
			block(release, "r"))
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = tk.Await(t.Context())
		if !errors.Is(err, ErrBackgrounded) || time.Since(start) != 120*time.Second {
			t.Fatalf("Await = %v after %s", err, time.Since(start))
		}
		close(release)
		<-tk.Done()
		if q.Len() != 1 {
			t.Fatal("auto-backgrounded task did not notify")
		}
		// A task that finishes first is never backgrounded.
		quick, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "quick", Linked: true, Queue: q, AutoBackground: time.Second}, done("q"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := quick.Await(t.Context()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Second)
		if quick.State().IsBackgrounded || q.Len() != 1 {
			t.Fatal("finished task was moved to the background")
		}
		closeReg(t, r)
	})
}

func TestEviction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, _ := newReg(t, nil)
		q := NewQueue()
		plain, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "plain", Background: true, Queue: q, Name: "p"}, done(""))
		if err != nil {
			t.Fatal(err)
		}
		kept, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "kept", Background: true, Queue: q, Retain: true}, done(""))
		if err != nil {
			t.Fatal(err)
		}
		<-plain.Done()
		<-kept.Done()
		t0 := time.Now()
		if st := plain.State(); !st.EvictAfter.Equal(t0.Add(3 * time.Second)) {
			t.Fatalf("EvictAfter = %s, want +3s", st.EvictAfter.Sub(t0))
		}
		listed := func() []string {
			var ids []string
			for _, s := range r.List() {
				ids = append(ids, s.Description)
			}
			return ids
		}
		time.Sleep(2999 * time.Millisecond)
		synctest.Wait()
		if got := listed(); len(got) != 2 {
			t.Fatalf("before grace: %v", got)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if got := listed(); len(got) != 1 || got[0] != "kept" {
			t.Fatalf("after 3s: %v", got)
		}
		if _, ok := r.Get("p"); ok {
			t.Fatal("evicted task still found by name")
		}
		if _, err := os.Stat(plain.State().OutputFile); err != nil {
			t.Fatalf("output file went with the task: %v", err)
		}
		time.Sleep(27 * time.Second)
		synctest.Wait()
		if got := listed(); len(got) != 0 {
			t.Fatalf("after 30s: %v", got)
		}
		closeReg(t, r)
	})
}

func TestSetRetainReschedules(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, _ := newReg(t, nil)
		tk, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "d", Background: true}, done(""))
		if err != nil {
			t.Fatal(err)
		}
		<-tk.Done()
		time.Sleep(time.Second)
		if err := r.SetRetain(tk.ID(), true); err != nil { // the panel opens: 30 s from the notification
			t.Fatal(err)
		}
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if len(r.List()) != 1 {
			t.Fatal("retained task evicted early")
		}
		if err := r.SetRetain(tk.ID(), false); err != nil { // grace already over: evict now
			t.Fatal(err)
		}
		synctest.Wait()
		if len(r.List()) != 0 {
			t.Fatal("task not evicted after retain was cleared")
		}
		if err := r.SetRetain(tk.ID(), true); !errors.Is(err, ErrNotFound) {
			t.Fatalf("SetRetain on an evicted task = %v", err)
		}
		closeReg(t, r)
	})
}

// Evicting a finished parent does not cut its running grandchildren off
// from a later cascade.
func TestCascadeThroughEvictedParent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, _ := newReg(t, nil)
		release := make(chan struct{})
		root, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "root", Background: true}, block(nil, ""))
		if err != nil {
			t.Fatal(err)
		}
		mid, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "mid", Background: true, ParentID: root.ID()}, block(release, ""))
		if err != nil {
			t.Fatal(err)
		}
		leaf, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "leaf", Background: true, ParentID: mid.ID()}, block(nil, ""))
		if err != nil {
			t.Fatal(err)
		}
		close(release)
		<-mid.Done()
		time.Sleep(time.Minute)
		synctest.Wait()
		if _, ok := r.Get(mid.ID()); ok {
			t.Fatal("mid not evicted")
		}
		if _, err := r.Stop(t.Context(), root.ID()); err != nil {
			t.Fatal(err)
		}
		if leaf.State().Status != StatusKilled {
			t.Fatal("leaf survived its grandparent's stop")
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		r.mu.Lock()
		kids, ghosts := len(r.kids), len(r.ghosts)
		r.mu.Unlock()
		if kids != 0 || ghosts != 0 {
			t.Fatalf("%d child index entries and %d ghosts left after everything was evicted", kids, ghosts)
		}
		closeReg(t, r)
	})
}

func TestCloseWithStuckTask(t *testing.T) {
	r, _ := newReg(t, nil)
	release := make(chan struct{})
	tk, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "stuck", Background: true},
		func(ctx context.Context, _ *Task) (Outcome, error) { <-release; return Outcome{}, nil })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := r.Close(ctx); err == nil {
		t.Fatal("Close succeeded with a task still running")
	}
	close(release)
	waitDoneT(t, tk)
	closeReg(t, r)
}

// Consume: a result read through TaskOutput is not notified again.
func TestConsume(t *testing.T) {
	r, _ := newReg(t, nil)
	q := NewQueue()
	tk, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "d", Background: true, Queue: q}, done("x"))
	if err != nil {
		t.Fatal(err)
	}
	waitDoneT(t, tk)
	r.Consume(tk.ID(), NewQueue()) // someone else's queue: no effect
	if q.Len() != 1 {
		t.Fatal("consumed through the wrong queue")
	}
	r.Consume(tk.ID(), q)
	if q.Len() != 0 {
		t.Fatal("notification not withdrawn")
	}
}
