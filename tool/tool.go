// Package tool defines what a tool is to the engine: a definition the model
// sees, traits that decide scheduling and approval, and a Run method.
//
// Where a built-in tool lives: next to the domain it acts on, in the
// package that holds that domain. Cohort's own domains keep their tools:
// crew (Agent), task (TaskOutput, TaskStop), tasklist (TaskCreate,
// TaskGet, TaskUpdate, TaskList), teammate (TeamCreate, TeamDelete,
// SendMessage), worktree (EnterWorktree, ExitWorktree), skill (Skill),
// workflowrun (Workflow). A tool whose domain is the machine or the
// conversation has a tool/<family> package that is that domain's:
// tool/file, tool/search, tool/shell, tool/web, tool/ask
// (AskUserQuestion), tool/plan (plan mode), tool/todo (the todo list).
// tool/builtin lists the machine's tools in their canonical order.
//
// A tool is written as a Spec (name, description, input schema, traits and
// a Run that takes the decoded input) and made a Tool by New, which does
// the decoding and turns a Failure into the is_error result the model
// reads. AbsPath and ResolvePath are the one reading of a path field: the
// file tools take absolute paths only, the search tools resolve against
// the agent's working directory.
//
// Env is Cohort's ToolUseContext: the calling agent's record (Agent: id,
// name, cwd, mode, depth, …), the read-file cache and an optional write
// guard. The abort signal is the ctx passed to Run.
package tool

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cohort-dev/cohort/llm"
)

// Tool is one capability the model can call. Implementations are safe for
// concurrent use: several agents, and parallel calls of one agent, share them.
type Tool interface {
	// Def returns the name, description and input schema. It must return the
	// same bytes every time: the tool array is part of the cached prefix.
	Def() llm.ToolDef
	// Traits classifies one call. input has passed schema validation.
	Traits(input json.RawMessage) Traits
	// Run executes one call. A failure the model should read is a Result
	// with IsError; a Go error means the infrastructure failed (or ctx ended)
	// and the engine reports it as an is_error result too.
	Run(ctx context.Context, env *Env, input json.RawMessage) (Result, error)
}

// Traits classify a call.
type Traits struct {
	// ReadOnly calls change nothing outside the agent; in default permission
	// mode they need no approval.
	ReadOnly bool
	// ConcurrencySafe calls may run in parallel with other safe calls.
	ConcurrencySafe bool
	// WholeMessage calls need the whole assistant message before they
	// start (a fork copies it; teammates one message spawns join their
	// team together), so the engine never starts one as soon as its block
	// is complete; it still runs in parallel with its group.
	WholeMessage bool
}

// Result is what a call returns to the model.
type Result struct {
	Content []llm.Block // text and image blocks
	IsError bool
	// Meta carries structured data for the engine and UIs (never sent to the
	// model), e.g. an Agent call's usage.
	Meta any
	// Response is the call's result in the structured shape Claude Code
	// reports for its tool (tool_response in hook input): Write
	// {type, filePath, content, structuredPatch, originalFile}, Bash
	// {stdout, stderr, interrupted, isImage}, Read {type, file}, …, with
	// Claude Code's field names. It must marshal to a JSON object. Nil means
	// the tool has no such shape; hooks then get the result's text.
	Response any
}

// Text returns a successful result holding s.
func Text(s string) Result { return Result{Content: []llm.Block{llm.Text(s)}} }

// Errorf returns an is_error result with a formatted message.
func Errorf(format string, args ...any) Result {
	return Result{Content: []llm.Block{llm.Text(fmt.Sprintf(format, args...))}, IsError: true}
}

// Failure is an error whose text is for the model: what was wrong with a
// call and what to do instead. When the Run of a tool made by New returns
// one, wrapped or not, the call answers with an is_error result holding
// that text; any other error stays an infrastructure failure. It lets a
// tool's helpers return plain errors and still speak to the model.
type Failure string

func (f Failure) Error() string { return string(f) }

// Failf returns a Failure with a formatted message.
func Failf(format string, args ...any) error { return Failure(fmt.Sprintf(format, args...)) }

// TextOf returns the text of r's text blocks.
func (r Result) TextOf() string { return llm.JoinText(r.Content) }

// Structured is the result in Claude Code's structured shape (a
// tool_use_result): its Response, else its Meta when that encodes as a
// JSON object or array; nil when it has none.
func (r *Result) Structured() json.RawMessage {
	for _, v := range []any{r.Response, r.Meta} {
		if v == nil {
			continue
		}
		raw, err := json.Marshal(v)
		if err == nil && len(raw) > 0 && (raw[0] == '{' || raw[0] == '[') {
			return raw
		}
	}
	return nil
}

// Env is the per-agent context a call runs in (Claude Code's ToolUseContext).
// The engine owns it; tools read it and must not retain it past Run.
type Env struct {
	// Caller is the calling agent's record as of this call: Env.Cwd is its
	// working directory (a worktree for isolated agents), Env.Depth its
	// nesting, Env.Caller.ID its id.
	Caller
	// SessionID is the session the agent belongs to.
	SessionID string
	// ToolUseID is the id of the tool_use block being run.
	ToolUseID string
	// Files records what the agent has read; Edit and Write consult it.
	Files *FileCache
	// Guard, when set, vets every path a tool is about to write.
	Guard WriteGuard
	// Confinement is what the permission decision behind this call lets
	// the programs it starts do (the Bash tool's sandbox profile). The
	// engine sets it from the gate's verdict for each call; the zero
	// value, when nothing set it, is the narrower ConfineReadOnly.
	Confinement Confinement
	// Access, when set, is what the agent's permissions let its file
	// tools do on their own (the agent's permission checker): the
	// permission check sees only the path a call names, so tools that
	// return many files' names or contents (Grep, Glob, LS) leave out
	// what Read deny rules cover, and the file tools open what they read
	// and write through it (no path checked first and opened by name
	// after).
	Access Access
	// Approved is set for the one call a person, or an allow rule naming
	// it, let through (not a mode): the file tools then write outside
	// Access's roots and on protected paths, as approved.
	Approved bool
	// Bounds, when set, is the sandbox's own account of what the agent's
	// commands may not write (its mount list, computed apart from the
	// permission layer's protected paths): the file tools refuse those
	// writes too, unless Approved, so one layer's mistake is not an escape.
	Bounds Bounds
}

// Bounds is the sandbox's computation of protected paths, asked by the
// file tools at the write itself. Safe for concurrent use.
type Bounds interface {
	// WriteRefusal says why path (absolute, links resolved) may not be
	// written by an agent working in cwd; "" when it may.
	WriteRefusal(cwd, path string) string
}

// Access is what an agent may read and write without asking anyone.
// Safe for concurrent use.
type Access interface {
	// DeniedRead reports whether path (absolute, or relative to cwd) is
	// covered by a Read deny rule, or cannot be checked against one (a
	// path through /proc/self): true means leave it out.
	DeniedRead(cwd, path string) bool
	// WriteRoots are the directories an agent working in cwd may write
	// (resolved): its working directories and memory directories.
	WriteRoots(cwd string) []string
	// Protected reports a path (absolute) that needs a person or a rule
	// even inside them: git control files, settings, agent definitions,
	// .mcp.json, the scripts hooks run.
	Protected(path string) bool
}

// DeniedRead asks Access, if any, whether path is covered by a Read deny
// rule.
func (e *Env) DeniedRead(path string) bool {
	if e == nil || e.Access == nil {
		return false
	}
	return e.Access.DeniedRead(e.Cwd, path)
}

// Confinement says how far the decision that let a call run trusts what
// the call runs. It is carried from the permission check to the tool, so
// that the sandbox below the check confines a command as narrowly as the
// check's reason allows: a wrong read-only verdict then cannot write.
type Confinement uint8

const (
	// ConfineReadOnly: the call runs only because it was judged
	// read-only (or nothing said why it runs). The zero value.
	ConfineReadOnly Confinement = iota
	// ConfineWrite: a rule, a permission mode, a hook or a person
	// approved the call, or the session checks no permissions.
	ConfineWrite
)

// WriteGuard refuses writes outside an agent's allowed area (worktree
// isolation). Safe for concurrent use.
type WriteGuard interface {
	CheckWrite(path string) error
}

// CheckWrite asks the guard, if any, whether path may be written.
func (e *Env) CheckWrite(path string) error {
	if e == nil || e.Guard == nil {
		return nil
	}
	return e.Guard.CheckWrite(path)
}

// Preparer is an optional interface of a Tool whose calls in one assistant
// message share set-up. The engine calls Prepare before a call of the
// message to this tool runs: once for each call it starts as soon as its
// block is complete (the message still streaming), and once, when the
// message has ended, with the calls that passed validation and had not
// started. batch names the message and is the same in every Prepare of
// it. Each returned done (which may be nil) runs once all the message's
// calls have ended. The Agent tool uses it to order agents one message
// starts behind the first (crew.Batch) and to put every teammate a message
// spawns into the team file before any of them starts, so teammates
// spawned together can message each other at once (teammate calls are
// WholeMessage, so they are all in the last Prepare). Prepare must not run
// the calls; a call it cannot prepare still runs and fails on its own.
type Preparer interface {
	Prepare(ctx context.Context, env *Env, batch string, calls []Call) (done func())
}

// Call is one tool call of a message, as Prepare sees it.
type Call struct {
	ID    string
	Input json.RawMessage
}

// PromptDescriber is an optional interface of a Tool whose permission
// prompts need more than the input shows: the Workflow tool puts its
// script's meta.description and a cost estimate first. DescribePrompt is
// called only when a call is about to be asked about; its text (empty for
// nothing) goes before the prompt's reason. It must return when ctx ends.
type PromptDescriber interface {
	DescribePrompt(ctx context.Context, env *Env, input json.RawMessage) string
}
