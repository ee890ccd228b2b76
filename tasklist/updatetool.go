package tasklist

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
)

// statusDeleted is the TaskUpdate status that deletes a task (Claude
// Code's); it is never stored.
const statusDeleted = "deleted"

// UpdateInput is TaskUpdate's input.
type UpdateInput struct {
	TaskID       string                     `json:"taskId"`
	Status       *string                    `json:"status,omitempty"`
	Subject      *string                    `json:"subject,omitempty"`
	Description  *string                    `json:"description,omitempty"`
	ActiveForm   *string                    `json:"activeForm,omitempty"`
	Owner        *string                    `json:"owner,omitempty"`
	AddBlocks    []string                   `json:"addBlocks,omitempty"`
	AddBlockedBy []string                   `json:"addBlockedBy,omitempty"`
	Metadata     map[string]json.RawMessage `json:"metadata,omitempty"`
}

// updater is TaskUpdate: it changes, claims, completes or deletes a task.
// With lists that can look members up (a *Store), it refuses an owner who
// is not an active member.
type updater struct{ lists Lists }

var taskIDList = tool.Array("", tool.String("A task id."))

var updateSchema = tool.Object(
	tool.Required("taskId", tool.String("Id of the task to change, as shown by TaskList (e.g. \"3\").")),
	tool.Optional("status", tool.Enum("New status. in_progress when you start, completed when the work is fully done, deleted to remove the task.",
		string(StatusPending), string(StatusInProgress), string(StatusCompleted), statusDeleted)),
	tool.Optional("subject", tool.String("New subject.").WithMinLength(1).WithMaxLength(maxSubjectLen)),
	tool.Optional("description", tool.String("New description.")),
	tool.Optional("activeForm", tool.String("New label shown while the task is in progress.")),
	tool.Optional("owner", tool.String("Agent name to give the task to; an empty string leaves it unowned.")),
	tool.Optional("addBlocks", withDesc(taskIDList, "Ids of tasks that cannot start until this one is completed.")),
	tool.Optional("addBlockedBy", withDesc(taskIDList, "Ids of tasks that must be completed before this one can start.")),
	tool.Optional("metadata", tool.Schema{Type: "object", Description: "Keys to merge into the task's metadata; a null value removes the key."}),
)

func withDesc(s tool.Schema, d string) tool.Schema { s.Description = d; return s }

const updateDescription = "Changes a task in your team's shared task list. " +
	"Set status to in_progress when you start work: without an owner you become the owner, and the call fails if another agent already owns the task " +
	"or if a task it waits for is not completed yet. Set status to completed only when the work is entirely done, then check TaskList for what has become free. " +
	"Dependencies that would loop are refused. Other fields replace the current values; metadata is merged."

func (u updater) updateTask(ctx context.Context, env *tool.Env, l *List, in UpdateInput) (tool.Result, error) {
	id := normalizeID(in.TaskID)
	if err := u.checkOwner(env.Team, in.Owner); err != nil {
		return tool.Result{}, err
	}
	if in.Status != nil && *in.Status == statusDeleted {
		if err := l.Delete(ctx, id); err != nil {
			return tool.Result{}, forModel(err)
		}
		return tool.Text(fmt.Sprintf("Deleted task #%s.", id)), nil
	}
	p := Patch{
		Subject: in.Subject, Description: in.Description, ActiveForm: in.ActiveForm, Owner: in.Owner,
		AddBlocks: normalizeIDs(in.AddBlocks), AddBlockedBy: normalizeIDs(in.AddBlockedBy),
		Metadata: in.Metadata, ClaimBy: env.Caller.Name,
	}
	if in.Status != nil {
		s := Status(*in.Status)
		p.Status = &s
	}
	t, err := l.Update(ctx, id, p)
	if err != nil {
		return tool.Result{}, forModel(err)
	}
	text := fmt.Sprintf("Updated task #%s (%s).\n%s", t.ID, changedFields(&in), listLine(&t))
	if t.Status == StatusCompleted && len(t.Blocks) > 0 {
		free := freed(ctx, l, t.Blocks)
		if len(free) > 0 {
			var lines []string
			for i := range free {
				lines = append(lines, listLine(&free[i]))
			}
			text += "\nNow unblocked:\n" + strings.Join(lines, "\n")
		}
		u.wakeOwners(ctx, env, free)
	}
	return tool.Result{Content: []llm.Block{llm.Text(text)}, Meta: t}, nil
}

// checkOwner returns a tool.Failure when owner names nobody in the team,
// so that a typo does not leave a task with an owner who never comes.
func (u updater) checkOwner(team string, owner *string) error {
	if owner == nil || *owner == "" {
		return nil
	}
	active, err := u.lists.ActiveMember(team, *owner)
	if err != nil || active {
		return nil // an error: the update itself reports a broken or missing team
	}
	return tool.Failf("%q is not an active member of team %s; set owner to a member's name, or leave it out to take the task yourself.", *owner, team)
}

func normalizeIDs(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = normalizeID(id)
	}
	return out
}

// changedFields names the fields an update input set, in input order.
func changedFields(in *UpdateInput) string {
	var f []string
	add := func(set bool, name string) {
		if set {
			f = append(f, name)
		}
	}
	add(in.Status != nil, "status")
	add(in.Subject != nil, "subject")
	add(in.Description != nil, "description")
	add(in.ActiveForm != nil, "activeForm")
	add(in.Owner != nil, "owner")
	add(len(in.AddBlocks) > 0, "blocks")
	add(len(in.AddBlockedBy) > 0, "blockedBy")
	add(len(in.Metadata) > 0, "metadata")
	if len(f) == 0 {
		return "nothing to change"
	}
	return strings.Join(f, ", ")
}

// freed returns the dependents of a just-completed task that can now
// start. It is informational: a read failure leaves them out.
func freed(ctx context.Context, l *List, dependents []string) []Task {
	tasks, _ := l.List(ctx)
	var out []Task
	for i := range tasks {
		t := &tasks[i]
		if slices.Contains(dependents, t.ID) && t.Status == StatusPending && !t.Blocked() {
			out = append(out, *t)
		}
	}
	return out
}

// wakeOwners tells the owner of each freed task, other than the caller,
// that it can start: one line through the team's mailbox, which wakes an
// idle owner. Best effort: the completion stands either way.
func (u updater) wakeOwners(ctx context.Context, env *tool.Env, free []Task) {
	n, ok := u.lists.(Notifier)
	if !ok {
		return
	}
	for _, t := range free {
		if t.Owner == "" || t.Owner == env.Caller.Name {
			continue
		}
		text := fmt.Sprintf("Task #%s (%s) is unblocked: its blockers are completed, and you own it, so you can start it now.", t.ID, t.Subject)
		_ = n.Notify(ctx, env.Team, env.Caller.Name, t.Owner, text)
	}
}
