// Package todo holds the TodoWrite tool: each agent keeps a task list that
// the model rewrites whole on every call, so it can plan multi-step work
// and show progress.
//
// Decisions the spec leaves open:
//
//   - Lists live in memory in the tool value, keyed by Env.Agent.ID (the
//     lead's id too), so subagents never see or clobber each other's lists.
//     They are not persisted; a resumed session starts with the list the
//     model writes next.
//   - As in Claude Code, when every item is completed the stored list is
//     cleared: a finished plan is no longer shown.
//   - Nothing limits how many items are in_progress: one is the rule for
//     work an agent does itself, but a lead whose agents work in parallel
//     has several under way, and a reminder to keep one would argue with
//     the user's request. The description says both.
//   - UIs read lists with List and can subscribe with Config.OnChange.
package todo

import (
	"context"
	"slices"
	"sync"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
)

// Statuses of an item.
const (
	Pending    = "pending"
	InProgress = "in_progress"
	Completed  = "completed"
)

// Item is one entry of a list. The JSON names are Claude Code's.
type Item struct {
	Content    string `json:"content"`
	Status     string `json:"status"`
	ActiveForm string `json:"activeForm"`
}

// Config configures the tool.
type Config struct {
	// OnChange, if set, is called after an agent's list changed, with a
	// copy of the new list (nil when cleared). It runs on the calling
	// goroutine while the tool's lock is held, so calls arrive in order; it
	// must be quick and must not call back into the tool.
	OnChange func(agentID string, items []Item)
}

// TodoWrite is the TodoWrite tool and the store of every agent's list. The
// list is the agent's own state, so calls are read-only as far as the world
// is concerned, and concurrency-safe. Safe for concurrent use.
type TodoWrite struct {
	tool.Tool
	cfg   Config
	mu    sync.Mutex
	lists map[string][]Item
}

// New returns the TodoWrite tool with no lists.
func New(cfg Config) *TodoWrite {
	t := &TodoWrite{cfg: cfg, lists: map[string][]Item{}}
	t.Tool = tool.New(tool.Spec[input]{Name: "TodoWrite", Description: description, Input: schema,
		Traits: tool.Traits{ReadOnly: true, ConcurrencySafe: true}, Run: t.write})
	return t
}

const description = `Creates and updates your task list for the current work. Each call replaces the whole list, so always send every item with its current status.

Use it for work with three or more distinct steps, when the user gives several tasks, or when asked to; skip it for a single simple step or pure conversation. It shows the user your plan and progress.

- Mark an item in_progress when work on it starts and completed as soon as it is fully done (not when tests still fail or work is partial). Work you do yourself goes one item at a time; items handed to agents running in parallel are in progress together.
- Add items you discover along the way; remove ones that no longer apply.`

var schema = tool.Object(
	tool.Required("todos", tool.Array("The complete, updated task list.", tool.Object(
		tool.Required("content", tool.String(`The task, in imperative form ("Run the tests").`).WithMinLength(1)),
		tool.Required("status", tool.Enum("The task's state.", Pending, InProgress, Completed)),
		tool.Required("activeForm", tool.String(`The same task as ongoing action ("Running the tests"), shown while it is in progress.`).WithMinLength(1)),
	))),
)

// Change is the Meta of a TodoWrite result.
type Change struct {
	Old, New []Item
}

type input struct {
	Todos []Item `json:"todos"`
}

// write replaces the calling agent's list.
func (t *TodoWrite) write(_ context.Context, env *tool.Env, in input) (tool.Result, error) {
	agent := ""
	if env != nil {
		agent = env.Caller.ID
	}
	items := slices.Clone(in.Todos)
	allDone := true
	for _, it := range items {
		allDone = allDone && it.Status == Completed
	}
	stored := items
	if allDone {
		stored = nil
	}
	t.mu.Lock()
	old := t.lists[agent]
	if stored == nil {
		delete(t.lists, agent)
	} else {
		t.lists[agent] = stored
	}
	if t.cfg.OnChange != nil {
		t.cfg.OnChange(agent, slices.Clone(stored)) // under the lock: calls arrive in order
	}
	t.mu.Unlock()
	msg := "Task list updated. Keep it current as you work: mark each task completed as soon as it is done and start the next."
	if len(items) > 0 && allDone {
		msg = "Task list updated: every task is completed, so the list has been cleared."
	}
	resp := &Response{OldTodos: orEmpty(slices.Clone(old)), NewTodos: orEmpty(slices.Clone(items))}
	return tool.Result{Content: []llm.Block{llm.Text(msg)}, Meta: Change{Old: old, New: slices.Clone(stored)}, Response: resp}, nil
}

// Response is the structured result of a TodoWrite call
// (tool.Result.Response), in Claude Code's shape: the list before the call
// and the list the call wrote (as written, before a finished list is
// cleared).
type Response struct {
	OldTodos []Item `json:"oldTodos"`
	NewTodos []Item `json:"newTodos"`
}

func orEmpty(items []Item) []Item {
	if items == nil {
		return []Item{}
	}
	return items
}

// List returns a copy of the agent's current list (nil if it has none).
func (t *TodoWrite) List(agentID string) []Item {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.lists[agentID])
}

// Forget drops the agent's list, for when the agent ends.
func (t *TodoWrite) Forget(agentID string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.lists, agentID)
}
