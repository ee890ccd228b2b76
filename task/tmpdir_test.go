package task

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func openReg(t *testing.T, home, session string) *Registry {
	t.Helper()
	r, err := NewRegistry(Config{Home: home, SessionID: session})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func closeNow(t *testing.T, r *Registry) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestASessionsTempDirGoesWhenItEnds is issue 17 item 10: a session whose
// tasks all reported leaves no $COHORT_HOME/tmp/{session} behind.
func TestASessionsTempDirGoesWhenItEnds(t *testing.T) {
	home := t.TempDir()
	r := openReg(t, home, "s1")
	q := NewQueue()
	fg, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "fg"}, done("a"))
	if err != nil {
		t.Fatal(err)
	}
	bg, err := r.Start(t.Context(), Spec{Kind: KindLocalBash, Command: "true", Background: true, Queue: q}, done("b"))
	if err != nil {
		t.Fatal(err)
	}
	waitDoneT(t, fg)
	waitDoneT(t, bg)
	if len(q.Drain()) != 1 {
		t.Fatal("no notification")
	}
	closeNow(t, r)
	if dir := filepath.Join(home, "tmp", "s1"); exists(dir) {
		entries, _ := os.ReadDir(filepath.Join(dir, "tasks"))
		t.Fatalf("%s is still there after the session ended (tasks: %v)", dir, entries)
	}
}

// TestAnUndeliveredOutputIsKeptForTheResume: a background task that ended
// without its notification reaching the parent (the session ended first)
// keeps its output file; the resumed session sees it as undelivered, and
// once it releases it, the directory goes at its end.
func TestAnUndeliveredOutputIsKeptForTheResume(t *testing.T) {
	home := t.TempDir()
	r := openReg(t, home, "s1")
	release := make(chan struct{})
	tk, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "slow", Background: true, Queue: NewQueue(), ToolUseID: "toolu_1"}, block(release, "x"))
	if err != nil {
		t.Fatal(err)
	}
	tk.Output().WriteLine("partial work")
	closeNow(t, r) // kills the task: its notification is queued, never drained
	out := filepath.Join(home, "tmp", "s1", "tasks", tk.ID()+".output")
	if !exists(out) {
		t.Fatalf("the output file of an undelivered notification was removed")
	}

	r2 := openReg(t, home, "s1") // the resumed session
	pend, err := r2.Undelivered()
	if err != nil || len(pend) != 1 || pend[0].TaskID != tk.ID() || pend[0].OutputFile != out || pend[0].ToolUseID != "toolu_1" {
		t.Fatalf("Undelivered: %+v, %v", pend, err)
	}
	if err := r2.Release(tk.ID()); err != nil {
		t.Fatal(err)
	}
	closeNow(t, r2)
	if exists(filepath.Join(home, "tmp", "s1")) {
		t.Fatal("the session directory outlived the released notification")
	}
}

// TestDeadSessionsAreSweptAtStart: the directories of sessions no process
// holds (killed: their lock is free) are swept when a registry starts,
// except pending outputs; a directory another process (here another
// registry) holds is left alone, and so is a recent pending output.
func TestDeadSessionsAreSweptAtStart(t *testing.T) {
	home := t.TempDir()
	live := openReg(t, home, "live")
	defer closeNow(t, live)
	write := func(rel string) string {
		p := filepath.Join(home, "tmp", rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("dead/.lock") // as a killed process leaves it: the file, no lock
	gone := write("dead/tasks/a00000001.output")
	keptOut := write("dead/tasks/a00000002.output")
	keptRec := write("dead/tasks/a00000002.pending")
	stale := write("dead/tasks/a00000003.output")
	staleRec := write("dead/tasks/a00000003.pending")
	old := time.Now().Add(-2 * DefaultPendingRetention)
	if err := os.Chtimes(staleRec, old, old); err != nil {
		t.Fatal(err)
	}
	legacy := write("legacy/tasks/b00000001.output") // an older Cohort's: no .lock at all
	liveOut := write("live/tasks/a00000009.output")

	r := openReg(t, home, "new")
	defer closeNow(t, r)
	for _, p := range []string{gone, stale, staleRec, filepath.Dir(legacy)} {
		if exists(p) {
			t.Errorf("%s survived the sweep", p)
		}
	}
	for _, p := range []string{keptOut, keptRec, liveOut} {
		if !exists(p) {
			t.Errorf("%s was swept", p)
		}
	}
}
