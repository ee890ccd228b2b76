package tasklist

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Errors of the task list. Returned errors wrap them with details.
var (
	// ErrGone: the list's directory, and so its team, no longer exists.
	ErrGone = errors.New("team not found")
	// ErrTaskNotFound: no task has that id.
	ErrTaskNotFound = errors.New("no such task")
	// ErrInvalidTask: a field of a task or patch is not acceptable.
	ErrInvalidTask = errors.New("invalid task")
	// ErrCycle: a dependency would make tasks wait for each other.
	ErrCycle = errors.New("dependency cycle")
	// ErrBlocked: the task cannot start while tasks it waits for are open
	// (the error is a *BlockedError).
	ErrBlocked = errors.New("task is blocked")
	// ErrClaimed: another agent owns the task (the error is a *ClaimedError).
	ErrClaimed = errors.New("task is claimed")
	// ErrCompleted: the task is completed and cannot be claimed.
	ErrCompleted = errors.New("task is completed")
)

// Blocker describes an open task that another task waits for.
type Blocker struct {
	ID     string
	Status Status // empty when the blocker's file is unreadable
	Owner  string
}

// BlockedError reports a task that cannot move to in_progress.
type BlockedError struct {
	ID       string
	Blockers []Blocker
}

func (e *BlockedError) Error() string {
	parts := make([]string, len(e.Blockers))
	for i, b := range e.Blockers {
		switch {
		case b.Status == "":
			parts[i] = "#" + b.ID + " (unreadable file)"
		case b.Owner != "":
			parts[i] = fmt.Sprintf("#%s (%s, owner %s)", b.ID, b.Status, b.Owner)
		default:
			parts[i] = fmt.Sprintf("#%s (%s)", b.ID, b.Status)
		}
	}
	return fmt.Sprintf("task #%s is blocked by %s; it can start once %s completed",
		e.ID, strings.Join(parts, ", "), plural(len(parts), "that task is", "those tasks are"))
}

// Is makes errors.Is(err, ErrBlocked) true.
func (e *BlockedError) Is(target error) bool { return target == ErrBlocked }

// ClaimedError reports a task owned by someone else.
type ClaimedError struct {
	ID    string
	Owner string
}

func (e *ClaimedError) Error() string {
	return fmt.Sprintf("task #%s is already claimed by %s", e.ID, e.Owner)
}

// Is makes errors.Is(err, ErrClaimed) true.
func (e *ClaimedError) Is(target error) bool { return target == ErrClaimed }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// blockPath returns the chain of "blocks" edges leading from from to to
// (both included), or nil when to is not reachable. Adding the edge
// to → from would then close a cycle.
func (st *listState) blockPath(from, to string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		if cur == to {
			var path []string
			for n := to; n != ""; n = prev[n] {
				path = append(path, n)
			}
			slices.Reverse(path)
			return path
		}
		t := st.tasks[cur]
		if t == nil {
			continue
		}
		for _, next := range t.Blocks {
			if _, seen := prev[next]; !seen {
				prev[next] = cur
				queue = append(queue, next)
			}
		}
	}
	return nil
}

// addEdge records "blocker blocks blocked" on both tasks after checking
// that both exist and the edge closes no cycle.
func (st *listState) addEdge(blocker, blocked string) error {
	if blocker == blocked {
		return fmt.Errorf("%w: task #%s cannot depend on itself", ErrInvalidTask, blocker)
	}
	a, err := st.task(blocker)
	if err != nil {
		return err
	}
	b, err := st.task(blocked)
	if err != nil {
		return err
	}
	if slices.Contains(a.Blocks, blocked) {
		return nil
	}
	if path := st.blockPath(blocked, blocker); path != nil {
		return fmt.Errorf("%w: #%s cannot block #%s because #%s already waits for it (%s)",
			ErrCycle, blocker, blocked, blocker, chain(path))
	}
	a.Blocks = sortedIDs(append(a.Blocks, blocked))
	b.BlockedBy = sortedIDs(append(b.BlockedBy, blocker))
	st.touch(blocker)
	st.touch(blocked)
	return nil
}

func chain(ids []string) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = "#" + id
	}
	return strings.Join(parts, " blocks ")
}

// openBlockers lists the tasks in t.BlockedBy that are not completed. An
// unreadable blocker counts as open: nothing starts on unknown grounds.
func (st *listState) openBlockers(t *Task) []Blocker {
	var out []Blocker
	for _, id := range t.BlockedBy {
		if b := st.tasks[id]; b != nil {
			if b.Status != StatusCompleted {
				out = append(out, Blocker{ID: id, Status: b.Status, Owner: b.Owner})
			}
		} else if st.bad[id] != nil {
			out = append(out, Blocker{ID: id})
		}
	}
	return out
}

// normalize makes blocks and blockedBy symmetric (the union of both
// directions, which repairs an edge half written before a crash) and
// drops references to tasks that no longer exist. Tasks it changes are
// marked for writing with the next mutation.
func (st *listState) normalize() {
	exists := func(id string) bool { return st.tasks[id] != nil || st.bad[id] != nil }
	for _, id := range st.order {
		t := st.tasks[id]
		keep := func(list []string) []string {
			return slices.DeleteFunc(list, func(o string) bool {
				if exists(o) {
					return false
				}
				st.repaired[id] = true
				return true
			})
		}
		t.Blocks, t.BlockedBy = keep(t.Blocks), keep(t.BlockedBy)
	}
	for _, id := range st.order {
		t := st.tasks[id]
		for _, other := range t.Blocks {
			if o := st.tasks[other]; o != nil && !slices.Contains(o.BlockedBy, id) {
				o.BlockedBy = sortedIDs(append(o.BlockedBy, id))
				st.repaired[other] = true
			}
		}
		for _, other := range t.BlockedBy {
			if o := st.tasks[other]; o != nil && !slices.Contains(o.Blocks, id) {
				o.Blocks = sortedIDs(append(o.Blocks, id))
				st.repaired[other] = true
			}
		}
	}
}
