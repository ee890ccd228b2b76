package task

import "testing"

// The caller's ctx may end after Await saw the move to the background but
// before background detached the link (the Agent call returns at once and
// its turn's ctx is cancelled): the link firing then must not stop the
// task. callerGone is what the link runs; calling it in that window is
// the interleaving, forced.
func TestLinkFiresAfterBackground(t *testing.T) {
	r, _ := newReg(t, nil)
	q := NewQueue()
	release := make(chan struct{})
	tk, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "flip", Linked: true, Queue: q}, block(release, "late answer"))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Background(tk.ID()); err != nil {
		t.Fatal(err)
	}
	tk.callerGone()
	if tk.stopping() {
		t.Fatal("the caller's ctx ending after the move to the background stopped the task")
	}
	close(release)
	if st := waitDoneT(t, tk); st.Status != StatusCompleted {
		t.Fatalf("status %s (%s)", st.Status, st.Err)
	}
	if items := q.Drain(); len(items) != 1 || items[0].Notification.Result != "late answer" {
		t.Fatalf("notifications %+v", items)
	}
}
