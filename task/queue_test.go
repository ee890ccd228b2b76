package task

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

func note(id string) Item {
	return Item{Kind: ItemNotification, Notification: &Notification{TaskID: id}}
}

func itemKeys(items []Item) []string {
	var out []string
	for _, it := range items {
		if it.Notification != nil {
			out = append(out, "n:"+it.Notification.TaskID)
		} else {
			out = append(out, it.Text)
		}
	}
	return out
}

func TestQueuePriorityAndFIFO(t *testing.T) {
	q := NewQueue()
	q.Enqueue(note("n1"))
	q.Enqueue(Item{Kind: ItemTeammateMessage, Text: "m1"})
	q.Enqueue(Item{Kind: ItemUserPrompt, Text: "u1"})
	q.EnqueueNotification(Notification{TaskID: "n2"})
	q.Enqueue(Item{Kind: ItemUserPrompt, Text: "u2"})
	q.Enqueue(Item{Kind: ItemTeammateMessage, Text: "m2"})
	if q.Len() != 6 {
		t.Fatalf("Len = %d", q.Len())
	}
	got := itemKeys(q.Drain())
	want := []string{"u1", "u2", "m1", "m2", "n:n1", "n:n2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Drain order (-want +got):\n%s", diff)
	}
	if q.Len() != 0 || len(q.Drain()) != 0 {
		t.Fatal("queue not empty after Drain")
	}
}

func TestQueueDrainKinds(t *testing.T) {
	q := NewQueue()
	q.Enqueue(Item{Kind: ItemUserPrompt, Text: "u1"})
	q.Enqueue(note("n1"))
	q.Enqueue(Item{Kind: ItemTeammateMessage, Text: "m1"})
	got := itemKeys(q.Drain(ItemNotification, ItemTeammateMessage))
	if diff := cmp.Diff([]string{"m1", "n:n1"}, got); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	select {
	case <-q.Ready():
	default:
		t.Fatal("Ready not closed while a user prompt waits")
	}
	if diff := cmp.Diff([]string{"u1"}, itemKeys(q.Drain())); diff != "" {
		t.Fatal(diff)
	}
	select {
	case <-q.Ready():
		t.Fatal("Ready closed on an empty queue")
	default:
	}
}

func TestQueueWithdraw(t *testing.T) {
	q := NewQueue()
	q.Enqueue(note("a"))
	q.Enqueue(note("b"))
	if !q.Withdraw("a") || q.Withdraw("a") || q.Withdraw("zz") {
		t.Fatal("Withdraw results wrong")
	}
	if diff := cmp.Diff([]string{"n:b"}, itemKeys(q.Drain())); diff != "" {
		t.Fatal(diff)
	}
	if q.Withdraw("b") {
		t.Fatal("withdrew a drained item")
	}
}

func TestQueueWaitWakes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewQueue()
		var woke time.Time
		var wg sync.WaitGroup
		wg.Go(func() {
			if err := q.Wait(t.Context()); err != nil {
				t.Error(err)
			}
			woke = time.Now()
		})
		time.Sleep(time.Minute)
		synctest.Wait()
		if !woke.IsZero() {
			t.Fatal("Wait returned on an empty queue")
		}
		q.EnqueueNotification(Notification{TaskID: "x"})
		wg.Wait()
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if err := q.Wait(ctx); err != nil {
			t.Fatalf("Wait on a non-empty queue: %v", err)
		}
		q.Drain()
		if err := q.Wait(ctx); err != context.DeadlineExceeded {
			t.Fatalf("Wait on an empty queue = %v, want deadline", err)
		}
	})
}

func TestQueueConcurrent(t *testing.T) {
	q := NewQueue()
	var wg sync.WaitGroup
	got := make(chan int, 1)
	wg.Go(func() {
		n := 0
		for n < 400 {
			if err := q.Wait(t.Context()); err != nil {
				t.Error(err)
				return
			}
			n += len(q.Drain())
		}
		got <- n
	})
	for range 4 {
		wg.Go(func() {
			for range 100 {
				q.Enqueue(Item{Kind: ItemTeammateMessage, Text: "m"})
			}
		})
	}
	wg.Wait()
	if n := <-got; n != 400 {
		t.Fatalf("drained %d items, want 400", n)
	}
}

func TestItemModelText(t *testing.T) {
	n := Notification{TaskID: "a1", OutputFile: "/o", Status: StatusCompleted, Summary: "s"}
	if got := (Item{Kind: ItemNotification, Notification: &n}).ModelText(); got != n.XML() {
		t.Fatalf("ModelText = %q", got)
	}
	if got := (Item{Kind: ItemUserPrompt, Text: "hi"}).ModelText(); got != "hi" {
		t.Fatalf("ModelText = %q", got)
	}
}

// A notification taken with Take stays pending (a resumed session would
// report the task) until its taker acknowledges it; Drain acknowledges.
func TestTakeHoldsThePendingRecordUntilAck(t *testing.T) {
	r, _ := newReg(t, nil)
	q := NewQueue()
	pending := func(id string) bool {
		_, err := os.Stat(filepath.Join(r.Dir(), id+pendingExt))
		return err == nil
	}
	tk, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "bg", Background: true, Queue: q}, done("done"))
	if err != nil {
		t.Fatal(err)
	}
	waitDoneT(t, tk)
	items := q.Take()
	if len(items) != 1 {
		t.Fatalf("took %d items, want 1", len(items))
	}
	if !pending(tk.ID()) {
		t.Fatal("taking the notification released it before it was recorded")
	}
	items[0].Ack()
	if pending(tk.ID()) {
		t.Fatal("Ack did not release the notification")
	}

	tk2, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "bg2", Background: true, Queue: q}, done("done"))
	if err != nil {
		t.Fatal(err)
	}
	waitDoneT(t, tk2)
	if len(q.Drain()) != 1 || pending(tk2.ID()) {
		t.Fatal("Drain did not hand over and release the notification")
	}
}
