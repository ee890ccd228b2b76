package team

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
)

// TaskLists finds a team's task list; *Store implements it.
type TaskLists interface {
	Tasks(team string) (*TaskList, error)
}

// TaskTools returns the four task-list tools over lists, in the order
// TaskCreate, TaskGet, TaskUpdate, TaskList.
func TaskTools(lists TaskLists) []tool.Tool {
	return []tool.Tool{&CreateTool{lists}, &GetTool{lists}, &UpdateTool{lists}, &ListTool{lists}}
}

// errNoTeam is the text of the result for an agent outside any team.
const errNoTeam = "not a team member; create or join a team first"

// taskList resolves the caller's task list. A nil result with a Result
// means the model should read the Result.
func taskList(lists TaskLists, env *tool.Env) (*TaskList, *tool.Result, error) {
	if env == nil || env.Team == "" {
		r := tool.Errorf(errNoTeam)
		return nil, &r, nil
	}
	l, err := lists.Tasks(env.Team)
	if err != nil {
		if r, ok := modelError(err); ok {
			return nil, &r, nil
		}
		return nil, nil, err
	}
	return l, nil, nil
}

// modelError turns the errors a model can act on into is_error results.
// Anything else (lock timeouts, I/O, cancellation) is infrastructure.
func modelError(err error) (tool.Result, bool) {
	var fe *FileError
	switch {
	case errors.Is(err, ErrNotFound):
		return tool.Errorf("Your team no longer exists (%v).", err), true
	case errors.Is(err, ErrTaskNotFound), errors.Is(err, ErrInvalidTask),
		errors.Is(err, ErrCycle), errors.Is(err, ErrBlocked),
		errors.Is(err, ErrClaimed), errors.Is(err, ErrCompleted),
		errors.Is(err, ErrInvalidName), errors.As(err, &fe):
		return tool.Errorf("%s", capitalize(err.Error())+"."), true
	}
	return tool.Result{}, false
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// decodeInput decodes a tool input; a failure is a Result for the model.
func decodeInput(name string, raw json.RawMessage, v any) *tool.Result {
	if len(strings.TrimSpace(string(raw))) == 0 {
		raw = json.RawMessage("{}")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		r := tool.Errorf("Invalid %s input: %v.", name, err)
		return &r
	}
	return nil
}

// normalizeID accepts "3" and "#3".
func normalizeID(id string) string { return strings.TrimPrefix(strings.TrimSpace(id), "#") }

var metadataSchema = tool.Schema{Type: "object", Description: "Free-form key/value data kept with the task."}

// CreateInput is TaskCreate's input.
type CreateInput struct {
	Subject     string                     `json:"subject"`
	Description string                     `json:"description"`
	ActiveForm  string                     `json:"activeForm,omitempty"`
	Metadata    map[string]json.RawMessage `json:"metadata,omitempty"`
}

// CreateTool is TaskCreate: adds a task to the team's list.
type CreateTool struct{ lists TaskLists }

var createSchema = tool.Object(
	tool.Required("subject", tool.String("Short imperative title, e.g. \"Add retry to the HTTP client\".").WithMinLength(1).WithMaxLength(maxSubjectLen)),
	tool.Required("description", tool.String("What has to be done and how to tell it is done, in enough detail for a teammate to start without asking.")),
	tool.Optional("activeForm", tool.String("Label shown while someone works on the task, e.g. \"Adding retry to the HTTP client\".")),
	tool.Optional("metadata", metadataSchema),
).JSON()

// Def implements tool.Tool.
func (*CreateTool) Def() llm.ToolDef {
	return llm.ToolDef{
		Name: "TaskCreate",
		Description: "Adds a task to your team's shared task list, which every member of the team can read and take work from. " +
			"Give a short imperative subject and a description detailed enough for a teammate to do the work without asking; " +
			"activeForm is the label shown while the task is in progress. " +
			"A new task is pending and unowned; use TaskUpdate to give it an owner or to record which tasks must finish first.",
		InputSchema: createSchema,
	}
}

// Traits implements tool.Tool: creating a task changes the shared list.
func (*CreateTool) Traits(json.RawMessage) tool.Traits { return tool.Traits{} }

// Run implements tool.Tool.
func (c *CreateTool) Run(ctx context.Context, env *tool.Env, raw json.RawMessage) (tool.Result, error) {
	l, res, err := taskList(c.lists, env)
	if l == nil {
		return deref(res), err
	}
	var in CreateInput
	if r := decodeInput("TaskCreate", raw, &in); r != nil {
		return *r, nil
	}
	t, err := l.Create(ctx, TaskSpec{
		Subject: in.Subject, Description: in.Description, ActiveForm: in.ActiveForm, Metadata: in.Metadata,
	})
	if err != nil {
		return failure(err)
	}
	return tool.Result{Content: []llm.Block{llm.Text(fmt.Sprintf("Created task #%s: %s", t.ID, oneLine(t.Subject)))}, Meta: t}, nil
}

// GetInput is TaskGet's input.
type GetInput struct {
	TaskID string `json:"taskId"`
}

// GetTool is TaskGet: shows one task in full.
type GetTool struct{ lists TaskLists }

var getSchema = tool.Object(
	tool.Required("taskId", tool.String("Id of the task, as shown by TaskList (e.g. \"3\").")),
).JSON()

// Def implements tool.Tool.
func (*GetTool) Def() llm.ToolDef {
	return llm.ToolDef{
		Name: "TaskGet",
		Description: "Shows one task of your team's shared task list in full: subject, status, owner, description, " +
			"the tasks it waits for and the tasks waiting for it. Read a task this way before you start on it.",
		InputSchema: getSchema,
	}
}

// Traits implements tool.Tool: reading changes nothing.
func (*GetTool) Traits(json.RawMessage) tool.Traits {
	return tool.Traits{ReadOnly: true, ConcurrencySafe: true}
}

// Run implements tool.Tool.
func (g *GetTool) Run(ctx context.Context, env *tool.Env, raw json.RawMessage) (tool.Result, error) {
	l, res, err := taskList(g.lists, env)
	if l == nil {
		return deref(res), err
	}
	var in GetInput
	if r := decodeInput("TaskGet", raw, &in); r != nil {
		return *r, nil
	}
	t, err := l.Get(ctx, normalizeID(in.TaskID))
	if err != nil {
		return failure(err)
	}
	return tool.Result{Content: []llm.Block{llm.Text(renderTask(&t))}, Meta: t}, nil
}

// ListTool is TaskList: one line per task.
type ListTool struct{ lists TaskLists }

var listSchema = tool.Object().JSON()

// Def implements tool.Tool.
func (*ListTool) Def() llm.ToolDef {
	return llm.ToolDef{
		Name: "TaskList",
		Description: "Lists your team's shared tasks, one line each: id, status, owner, subject, and the unfinished tasks it is blocked by. " +
			"A pending task with no owner that is not blocked is free to take. Look here when you finish a task to find the next one.",
		InputSchema: listSchema,
	}
}

// Traits implements tool.Tool: reading changes nothing.
func (*ListTool) Traits(json.RawMessage) tool.Traits {
	return tool.Traits{ReadOnly: true, ConcurrencySafe: true}
}

// Run implements tool.Tool.
func (lt *ListTool) Run(ctx context.Context, env *tool.Env, raw json.RawMessage) (tool.Result, error) {
	l, res, err := taskList(lt.lists, env)
	if l == nil {
		return deref(res), err
	}
	var in struct{}
	if r := decodeInput("TaskList", raw, &in); r != nil {
		return *r, nil
	}
	tasks, err := l.List(ctx)
	var fe *FileError
	if err != nil && !errors.As(err, &fe) {
		return failure(err)
	}
	return tool.Result{Content: []llm.Block{llm.Text(renderList(tasks, err))}, Meta: tasks}, nil
}

func deref(r *tool.Result) tool.Result {
	if r == nil {
		return tool.Result{}
	}
	return *r
}

// failure maps an error to a model-readable result or an infrastructure
// error.
func failure(err error) (tool.Result, error) {
	if r, ok := modelError(err); ok {
		return r, nil
	}
	return tool.Result{}, err
}
