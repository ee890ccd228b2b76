package task

import (
	"context"
	"slices"
	"sync"
)

// ItemKind orders what waits in a Queue. Lower values drain first.
type ItemKind int

// Queue item kinds, highest priority first.
const (
	ItemUserPrompt      ItemKind = iota // typed by the user while the agent worked
	ItemTeammateMessage                 // from another agent (already rendered)
	ItemNotification                    // a background task ended
)

// Item is one thing waiting for an agent's next turn boundary.
type Item struct {
	Kind ItemKind
	// Text is the content of a user prompt or a rendered teammate message.
	Text string
	// From is a teammate message's sender (for the transcript).
	From string
	// Notification is set for ItemNotification.
	Notification *Notification
	// delivered, when set, runs once the item has been handed over (Ack):
	// the registry's record that the task's notification reached the
	// agent (its output file may then go with the session, and a resumed
	// session will not report the task as killed).
	delivered func()
}

// Ack records that the item has been handed over. An item taken with Take
// is acknowledged by its taker once it is durably recorded (the engine
// does it after the transcript entry is written), so a crash between the
// two leaves the task pending and a resumed session reports it.
func (it Item) Ack() {
	if it.delivered != nil {
		it.delivered()
	}
}

// OnAck returns the item with f run once it has been handed over (Ack),
// after any acknowledgement it already had.
func (it Item) OnAck(f func()) Item {
	prev := it.delivered
	it.delivered = func() {
		if prev != nil {
			prev()
		}
		f()
	}
	return it
}

// ModelText returns what the model reads for the item.
func (it Item) ModelText() string {
	if it.Kind == ItemNotification && it.Notification != nil {
		return it.Notification.XML()
	}
	return it.Text
}

// Queue holds what an agent should see at its next turn boundary: one
// queue per agent (the lead and each teammate). Safe for concurrent use.
//
// The engine uses it like this: at every turn boundary it calls Drain; user
// prompts come first and become ordinary user input, and everything else
// (teammate messages, then task notifications) goes into one user-role
// message marked as a system notification, never as user input. A lead
// that is idle (print mode with background tasks running) blocks in Wait
// or selects on Ready, and starts a turn when something arrives.
type Queue struct {
	mu    sync.Mutex
	items []Item
	ready chan struct{} // closed while items is non-empty
}

// NewQueue returns an empty queue.
func NewQueue() *Queue { return &Queue{ready: make(chan struct{})} }

// Enqueue appends it and wakes waiters.
func (q *Queue) Enqueue(it Item) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.items = append(q.items, it)
	if len(q.items) == 1 {
		close(q.ready)
	}
}

// EnqueueFirst puts it ahead of every waiting item (Drain still orders by
// kind, so it comes first among its kind) and wakes waiters.
func (q *Queue) EnqueueFirst(it Item) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.items = append([]Item{it}, q.items...)
	if len(q.items) == 1 {
		close(q.ready)
	}
}

// EnqueueNotification enqueues n as an ItemNotification.
func (q *Queue) EnqueueNotification(n Notification) {
	q.Enqueue(Item{Kind: ItemNotification, Notification: &n})
}

// Drain removes and returns the waiting items of the given kinds (all
// kinds when none are given), ordered by kind priority and, within a kind,
// first in first out, and acknowledges them.
func (q *Queue) Drain(kinds ...ItemKind) []Item {
	out := q.Take(kinds...)
	for _, it := range out {
		it.Ack()
	}
	return out
}

// Take is Drain without the acknowledgement: the caller calls Ack on each
// item once it has recorded it.
func (q *Queue) Take(kinds ...ItemKind) []Item {
	q.mu.Lock()
	var out, keep []Item
	for _, it := range q.items {
		if len(kinds) == 0 || slices.Contains(kinds, it.Kind) {
			out = append(out, it)
		} else {
			keep = append(keep, it)
		}
	}
	q.setItemsLocked(keep)
	q.mu.Unlock()
	slices.SortStableFunc(out, func(a, b Item) int { return int(a.Kind) - int(b.Kind) })
	return out
}

// Withdraw removes a task's notification that has not been drained yet and
// reports whether there was one (TaskOutput already gave the model the
// result).
func (q *Queue) Withdraw(taskID string) bool {
	q.mu.Lock()
	i := slices.IndexFunc(q.items, func(it Item) bool {
		return it.Kind == ItemNotification && it.Notification != nil && it.Notification.TaskID == taskID
	})
	if i < 0 {
		q.mu.Unlock()
		return false
	}
	delivered := q.items[i].delivered
	q.setItemsLocked(slices.Delete(slices.Clone(q.items), i, i+1))
	q.mu.Unlock()
	if delivered != nil {
		delivered()
	}
	return true
}

func (q *Queue) setItemsLocked(items []Item) {
	was := len(q.items) > 0
	q.items = items
	if was && len(items) == 0 {
		q.ready = make(chan struct{})
	}
}

// Len returns how many items wait.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items)
}

// Ready returns a channel that is closed while the queue holds items. Take
// a fresh channel after each Drain.
func (q *Queue) Ready() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.ready
}

// Wait blocks until the queue holds an item or ctx ends.
func (q *Queue) Wait(ctx context.Context) error {
	select {
	case <-q.Ready():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
