package task

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Stop stops the task named by id (or agent name) and every task below it:
// it cancels their contexts and waits until each run function has returned
// and been finalized, so child contexts are done and processes reaped when
// it returns. The wait ends at ctx's end or Config.StopTimeout; tasks still
// running then are reported in an ErrStopTimeout error (they stay signalled
// and are finalized when they return). A task that is not running gives
// ErrNotRunning.
func (r *Registry) Stop(ctx context.Context, idOrName string) (State, error) {
	t, err := r.lookup(idOrName)
	if err != nil {
		return State{}, err
	}
	tree, err := r.signalTree(t, "stopped by request")
	if err != nil {
		return t.State(), err
	}
	if err := r.waitDone(ctx, tree); err != nil {
		return t.State(), err
	}
	return t.State(), nil
}

// Kill is Stop without the wait.
func (r *Registry) Kill(idOrName string) error {
	t, err := r.lookup(idOrName)
	if err != nil {
		return err
	}
	_, err = r.signalTree(t, "stopped by request")
	return err
}

// signalTree signals t and all its running descendants. Under r.mu, so no
// child registers unseen meanwhile (register refuses a stopping parent).
func (r *Registry) signalTree(t *Task, reason string) ([]*Task, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !t.signal(reason) {
		return nil, fmt.Errorf("task %s (%s): %w", t.id, t.State().Status, ErrNotRunning)
	}
	tree := []*Task{t}
	queue := slices.Clone(r.kids[t.id])
	seen := map[string]bool{t.id: true}
	for len(queue) > 0 {
		id := queue[0]
		queue = queue[1:]
		if seen[id] {
			continue
		}
		seen[id] = true
		queue = append(queue, r.kids[id]...) // through evicted tasks too
		if c := r.tasks[id]; c != nil && c.signal("its parent task was stopped") {
			tree = append(tree, c)
		}
	}
	return tree, nil
}

// waitDone waits for every task in ts to finish, up to StopTimeout.
func (r *Registry) waitDone(ctx context.Context, ts []*Task) error {
	ctx, cancel := context.WithTimeout(ctx, r.cfg.StopTimeout)
	defer cancel()
	if stuck := waitAll(ctx, ts); len(stuck) > 0 {
		return fmt.Errorf("%w: %s still running after %s; they were told to stop and will be finalized when they return",
			ErrStopTimeout, strings.Join(stuck, ", "), r.cfg.StopTimeout)
	}
	return nil
}

// Background moves a running task to the background: a foreground caller
// waiting in Await gets ErrBackgrounded, a linked task stops following its
// caller's ctx, and the task notifies its queue when it ends. Moving a task
// that is already in the background is a no-op; a terminal task gives
// ErrNotRunning (its caller gets the result directly).
func (r *Registry) Background(idOrName string) error {
	t, err := r.lookup(idOrName)
	if err != nil {
		return err
	}
	return t.background(true)
}

// background moves t to the background; byUser marks a move the user
// asked for (Registry.Background), not Spec.AutoBackground's timer.
func (t *Task) background(byUser bool) error {
	t.mu.Lock()
	if t.status.Terminal() {
		st := t.status
		t.mu.Unlock()
		return fmt.Errorf("task %s (%s): %w", t.id, st, ErrNotRunning)
	}
	if t.backgrounded {
		t.mu.Unlock()
		return nil
	}
	t.backgrounded, t.movedByUser = true, byUser
	close(t.bg)
	stops := []func() bool{t.unlink, t.autoBgStop}
	t.unlink, t.autoBgStop = nil, nil
	t.mu.Unlock()
	for _, stop := range stops {
		if stop != nil {
			stop()
		}
	}
	yes := true
	t.emitUpdated(Patch{IsBackgrounded: &yes})
	t.r.levelAdd(t)
	return nil
}

// Wait blocks until the task ends or ctx does (TaskOutput with block).
// On ctx's end it returns the current state and ctx's error.
func (r *Registry) Wait(ctx context.Context, idOrName string) (State, error) {
	t, err := r.lookup(idOrName)
	if err != nil {
		return State{}, err
	}
	return t.Wait(ctx)
}

// Wait blocks until the task ends or ctx does. On ctx's end it returns the
// current state and ctx's error.
func (t *Task) Wait(ctx context.Context) (State, error) {
	select {
	case <-t.done:
		return t.State(), nil
	case <-ctx.Done():
		return t.State(), ctx.Err()
	}
}

// Consume records that the agent owning queue q has read a terminal task's
// result some other way (TaskOutput): the task's notification is not sent,
// or withdrawn from q if it is still waiting there. It does nothing for a
// running task or a task that notifies another queue.
func (r *Registry) Consume(idOrName string, q *Queue) {
	t, ok := r.Get(idOrName)
	if !ok || q == nil || t.spec.Queue != q || t.running() {
		return
	}
	t.notifyMu.Lock()
	first := t.notified.CompareAndSwap(false, true)
	if !first {
		// Enqueued already (the lock orders it before this): take it back.
		q.Withdraw(t.id)
	}
	t.notifyMu.Unlock()
	if first {
		_ = r.Release(t.id)
		r.scheduleEviction(t)
	}
}

// SetRetain marks a task as shown in a panel (longer eviction grace) or
// not. A pending eviction is rescheduled from the notification time.
func (r *Registry) SetRetain(idOrName string, retain bool) error {
	t, err := r.lookup(idOrName)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.retain = retain
	if r.closed || t.evictStop == nil || !t.evictStop() {
		return nil // not scheduled yet, or eviction already under way
	}
	r.armEvictionLocked(t)
	return nil
}

func (r *Registry) grace(retain bool) time.Duration {
	if retain {
		return r.cfg.RetainGrace
	}
	return r.cfg.EvictGrace
}

// scheduleEviction starts a notified task's grace period.
func (r *Registry) scheduleEviction(t *Task) {
	now := r.clock.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.notifiedAt = now
	if r.closed {
		return // a closed registry keeps its last listing
	}
	r.armEvictionLocked(t)
}

// armEvictionLocked sets the eviction timer; r.mu and t.mu are held.
func (r *Registry) armEvictionLocked(t *Task) {
	t.evictAfter = t.notifiedAt.Add(r.grace(t.retain))
	d := max(t.evictAfter.Sub(r.clock.Now()), 0)
	t.evictStop = r.clock.AfterFunc(d, func() { r.evict(t) })
}

// evict removes t from the listing; its output file stays.
func (r *Registry) evict(t *Task) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tasks[t.id] != t {
		return
	}
	delete(r.tasks, t.id)
	if r.byName[t.spec.Name] == t {
		delete(r.byName, t.spec.Name)
	}
	if r.byAgent[t.spec.AgentID] == t {
		delete(r.byAgent, t.spec.AgentID)
	}
	if len(r.kids[t.id]) > 0 {
		// Keep the path to t's listed descendants for a later cascade.
		r.ghosts[t.id] = t.parentID
		return
	}
	delete(r.kids, t.id)
	r.unlinkLocked(t.id, t.parentID)
}

// unlinkLocked removes a gone, childless id from its parent's child list,
// and walks up through evicted ancestors that become childless in turn.
func (r *Registry) unlinkLocked(id, parent string) {
	for parent != "" {
		r.kids[parent] = slices.DeleteFunc(r.kids[parent], func(k string) bool { return k == id })
		if len(r.kids[parent]) > 0 {
			return
		}
		delete(r.kids, parent)
		if _, listed := r.tasks[parent]; listed {
			return
		}
		grand, ghost := r.ghosts[parent]
		if !ghost {
			return
		}
		delete(r.ghosts, parent)
		id, parent = parent, grand
	}
}

// Close kills every running task and waits, until ctx ends, for all of
// them to finish; then it stops eviction timers and releases the output
// directory. Tasks still running when ctx ends are listed in the error.
// Start fails after Close. Close may be called again to keep waiting.
func (r *Registry) Close(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	all := make([]*Task, 0, len(r.tasks))
	for _, t := range r.tasks {
		all = append(all, t)
	}
	r.mu.Unlock()
	for _, t := range all {
		t.signal("the session is closing")
	}
	stuck := waitAll(ctx, all)
	for _, t := range all {
		t.mu.Lock()
		if t.evictStop != nil {
			t.evictStop()
		}
		t.mu.Unlock()
	}
	if len(stuck) > 0 {
		return fmt.Errorf("task registry close: %s still running: %w", strings.Join(stuck, ", "), ctx.Err())
	}
	r.closeOnce.Do(func() {
		r.rootErr = r.root.Close()
		r.closeSessionDir()
	})
	return r.rootErr
}

// waitAll waits for each task to finish until ctx ends and returns the ids
// of those still running.
func waitAll(ctx context.Context, ts []*Task) []string {
	var stuck []string
	for _, t := range ts {
		select {
		case <-t.done:
			continue
		default:
		}
		select {
		case <-t.done:
		case <-ctx.Done():
			stuck = append(stuck, t.id)
		}
	}
	return stuck
}
