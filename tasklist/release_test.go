package tasklist

import (
	"errors"
	"testing"
)

// A dead member's open tasks become claimable again; its completed ones
// and other members' stay as they are.
func TestReleaseGivesBackAnOwnersOpenTasks(t *testing.T) {
	ctx := t.Context()
	l := newTaskList(t)
	a, b, c, d := mustTask(t, l, "a"), mustTask(t, l, "b"), mustTask(t, l, "c"), mustTask(t, l, "d")
	for _, id := range []string{a.ID, b.ID} {
		if _, err := l.Claim(ctx, id, "carl"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := l.Update(ctx, b.ID, Patch{Status: ptr(StatusCompleted)}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Update(ctx, c.ID, Patch{Owner: ptr("Carl")}); err != nil { // assigned, not started
		t.Fatal(err)
	}
	if _, err := l.Claim(ctx, d.ID, "dora"); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Claim(ctx, a.ID, "dora"); !errors.As(err, new(*ClaimedError)) {
		t.Fatalf("claim of carl's task before the release: %v, want a ClaimedError", err)
	}
	got, err := l.Release(ctx, "carl")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != a.ID || got[1].ID != c.ID {
		t.Fatalf("released %+v, want tasks %s and %s", got, a.ID, c.ID)
	}
	for _, id := range []string{a.ID, c.ID} {
		if task := mustGet(t, l, id); task.Owner != "" || task.Status != StatusPending {
			t.Errorf("task %s after release: owner %q status %s, want unowned and pending", id, task.Owner, task.Status)
		}
	}
	if task := mustGet(t, l, b.ID); task.Owner != "carl" || task.Status != StatusCompleted {
		t.Errorf("completed task %s changed: %+v", b.ID, task)
	}
	if task := mustGet(t, l, d.ID); task.Owner != "dora" {
		t.Errorf("dora's task %s changed: %+v", d.ID, task)
	}
	if _, err := l.Claim(ctx, a.ID, "dora"); err != nil {
		t.Fatalf("claim after the release: %v", err)
	}
	if again, err := l.Release(ctx, "carl"); err != nil || len(again) != 0 {
		t.Fatalf("second release: %v, %v; want nothing", again, err)
	}
}
