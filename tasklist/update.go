package tasklist

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/internal/clip"
)

// Patch is a change to a task; nil fields stay as they are.
type Patch struct {
	Subject     *string
	Description *string
	ActiveForm  *string
	Status      *Status
	// Owner sets the owner; a pointer to "" clears it.
	Owner *string
	// AddBlocks: ids of tasks that cannot start until this one is completed.
	AddBlocks []string
	// AddBlockedBy: ids of tasks that must be completed before this one.
	AddBlockedBy []string
	// Metadata is merged into the task's metadata; a null value deletes the
	// key.
	Metadata map[string]json.RawMessage
	// ClaimBy makes a move to in_progress without Owner a claim: the task
	// gets this owner if it has none, and the update fails with a
	// *ClaimedError if someone else owns it. Ignored otherwise.
	ClaimBy string
}

// check validates the patch's own fields.
func (p *Patch) check() error {
	if p.Subject != nil {
		if err := checkText("subject", *p.Subject, maxSubjectLen, true); err != nil {
			return err
		}
	}
	if p.Description != nil {
		if err := checkText("description", *p.Description, maxDescriptionLen, false); err != nil {
			return err
		}
	}
	if p.ActiveForm != nil {
		if err := checkText("activeForm", *p.ActiveForm, maxSubjectLen, false); err != nil {
			return err
		}
	}
	if p.Status != nil && !p.Status.Valid() {
		return fmt.Errorf("%w: status %q is not one of pending, in_progress, completed", ErrInvalidTask, clip.Runes(string(*p.Status), 40))
	}
	if p.Owner != nil {
		if err := checkOwner(*p.Owner); err != nil {
			return err
		}
	}
	if err := checkOwner(p.ClaimBy); err != nil {
		return err
	}
	for _, id := range slices.Concat(p.AddBlocks, p.AddBlockedBy) {
		if err := ValidateTaskID(id); err != nil {
			return err
		}
	}
	return nil
}

// Update applies p to task id in one locked step: all of it or none. It
// keeps blocks and blockedBy symmetric, refuses unknown ids, self
// dependencies and cycles, and refuses to move a blocked task to
// in_progress (a *BlockedError naming the open blockers).
func (l *List) Update(ctx context.Context, id string, p Patch) (Task, error) {
	if err := ValidateTaskID(id); err != nil {
		return Task{}, err
	}
	if err := p.check(); err != nil {
		return Task{}, err
	}
	var out Task
	err := l.mutate(ctx, func(st *listState) error {
		t, err := st.task(id)
		if err != nil {
			return err
		}
		for _, b := range p.AddBlocks {
			if err := st.addEdge(id, b); err != nil {
				return err
			}
		}
		for _, b := range p.AddBlockedBy {
			if err := st.addEdge(b, id); err != nil {
				return err
			}
		}
		before := t.Clone()
		if err := st.apply(t, &p); err != nil {
			return err
		}
		if !taskEqual(&before, t) {
			st.touch(id)
		}
		out = st.view(t)
		return nil
	})
	return out, err
}

// apply sets p's plain fields on t, checking the in_progress rule.
func (st *listState) apply(t *Task, p *Patch) error {
	starting := p.Status != nil && *p.Status == StatusInProgress
	if starting && p.Owner == nil && p.ClaimBy != "" && t.Owner != "" && !strings.EqualFold(t.Owner, p.ClaimBy) {
		return &ClaimedError{ID: t.ID, Owner: t.Owner}
	}
	if starting && t.Status != StatusInProgress {
		if open := st.openBlockers(t); len(open) > 0 {
			return &BlockedError{ID: t.ID, Blockers: open}
		}
	}
	if starting && p.Owner == nil && p.ClaimBy != "" && t.Owner == "" {
		t.Owner = p.ClaimBy
	}
	meta, err := mergeMetadata(t.Metadata, p.Metadata)
	if err != nil {
		return err
	}
	t.Metadata = meta
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	set(&t.Subject, p.Subject)
	set(&t.Description, p.Description)
	set(&t.ActiveForm, p.ActiveForm)
	set(&t.Owner, p.Owner)
	if p.Status != nil {
		t.Status = *p.Status
	}
	return nil
}

// taskEqual compares the stored fields of two tasks.
func taskEqual(a, b *Task) bool {
	ma, _ := MarshalTask(*a)
	mb, _ := MarshalTask(*b)
	return string(ma) == string(mb)
}

// Claim makes owner the owner of task id and sets it in_progress. It
// succeeds when the task is unowned or already owner's (names compared
// case-insensitively); otherwise it fails with a *ClaimedError. A
// completed task fails with ErrCompleted, a blocked one with a
// *BlockedError. Of any number of concurrent claims, from any number of
// processes, exactly one wins.
func (l *List) Claim(ctx context.Context, id, owner string) (Task, error) {
	if err := ValidateTaskID(id); err != nil {
		return Task{}, err
	}
	if owner == "" {
		return Task{}, fmt.Errorf("%w: claim needs an owner", ErrInvalidTask)
	}
	if err := checkOwner(owner); err != nil {
		return Task{}, err
	}
	var out Task
	err := l.mutate(ctx, func(st *listState) error {
		t, err := st.task(id)
		if err != nil {
			return err
		}
		switch {
		case t.Owner != "" && !strings.EqualFold(t.Owner, owner):
			return &ClaimedError{ID: id, Owner: t.Owner}
		case t.Status == StatusCompleted:
			return fmt.Errorf("%w: task #%s is already completed", ErrCompleted, id)
		case t.Owner != "" && t.Status == StatusInProgress:
			out = st.view(t) // already ours
			return nil
		}
		if open := st.openBlockers(t); len(open) > 0 && t.Status != StatusInProgress {
			return &BlockedError{ID: id, Blockers: open}
		}
		t.Owner, t.Status = owner, StatusInProgress
		st.touch(id)
		out = st.view(t)
		return nil
	})
	return out, err
}

// Delete removes task id and every reference to it. Ids are never reused.
func (l *List) Delete(ctx context.Context, id string) error {
	if err := ValidateTaskID(id); err != nil {
		return err
	}
	return l.mutate(ctx, func(st *listState) error {
		t, err := st.task(id)
		if err != nil {
			return err
		}
		for _, other := range slices.Concat(t.Blocks, t.BlockedBy) {
			o := st.tasks[other]
			if o == nil {
				continue // unreadable: its dangling reference is dropped on load
			}
			o.Blocks = slices.DeleteFunc(o.Blocks, func(s string) bool { return s == id })
			o.BlockedBy = slices.DeleteFunc(o.BlockedBy, func(s string) bool { return s == id })
			st.touch(other)
		}
		st.removed[id] = true
		delete(st.repaired, id)
		return nil
	})
}

// Release gives back every task owner holds that is not completed: each
// goes back to pending with no owner, all in one step, so another member
// can claim it. The team layer calls it for a member that shut down or
// was declared dead. It returns the tasks released, in id order (none is
// not an error).
func (l *List) Release(ctx context.Context, owner string) ([]Task, error) {
	if owner == "" {
		return nil, fmt.Errorf("%w: release needs an owner", ErrInvalidTask)
	}
	if err := checkOwner(owner); err != nil {
		return nil, err
	}
	var out []Task
	err := l.mutate(ctx, func(st *listState) error {
		out = nil // mutate may run fn again after a lost compare-and-set
		for _, id := range st.order {
			t := st.tasks[id]
			if !strings.EqualFold(t.Owner, owner) || t.Status == StatusCompleted {
				continue
			}
			t.Owner, t.Status = "", StatusPending
			st.touch(id)
			out = append(out, st.view(t))
		}
		return nil
	})
	return out, err
}
