package tasklist

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cohort-dev/cohort/internal/jsonfile"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
)

// Lists is what the tools need of the teams whose lists they work on
// (package team's Store.TaskLists has it).
type Lists interface {
	// Tasks returns the team's list. An error the model can act on (the
	// team is gone, its name cannot be one) is a tool.Failure worded for
	// it; any other error is infrastructure.
	Tasks(team string) (*List, error)
	// ActiveMember reports whether name is an active member of team; an
	// error means it cannot tell (a broken or missing team, which the
	// call itself then reports).
	ActiveMember(team, name string) (bool, error)
}

// Notifier is implemented by Lists that can reach a member of a team (its
// mailbox): TaskUpdate tells the owner of a task that a completion made
// free, so an idle owner starts without being asked.
type Notifier interface {
	Notify(ctx context.Context, team, from, to, text string) error
}

// Tools returns the four task-list tools over lists, in the order
// TaskCreate, TaskGet, TaskUpdate, TaskList. Each call works on the
// caller's team's list; TaskGet and TaskList only read it, so they are
// read-only and concurrency-safe, while TaskCreate and TaskUpdate change
// the shared list and are neither.
func Tools(lists Lists) []tool.Tool {
	readOnly := tool.Traits{ReadOnly: true, ConcurrencySafe: true}
	return []tool.Tool{
		tool.New(tool.Spec[CreateInput]{Name: "TaskCreate", Description: createDescription, Input: createSchema,
			Run: onList(lists, createTask), Invalid: invalid("TaskCreate")}),
		tool.New(tool.Spec[GetInput]{Name: "TaskGet", Description: getDescription, Input: getSchema, Traits: readOnly,
			Run: onList(lists, getTask), Invalid: invalid("TaskGet")}),
		tool.New(tool.Spec[UpdateInput]{Name: "TaskUpdate", Description: updateDescription, Input: updateSchema,
			Run: onList(lists, updater{lists}.updateTask), Invalid: invalid("TaskUpdate")}),
		tool.New(tool.Spec[struct{}]{Name: "TaskList", Description: listDescription, Input: tool.Object(), Traits: readOnly,
			Run: onList(lists, listTasks), Invalid: invalid("TaskList")}),
	}
}

// listRun is the body of a task-list tool, given the caller's list.
type listRun[In any] func(ctx context.Context, env *tool.Env, l *List, in In) (tool.Result, error)

// onList makes run a Spec's Run: it finds the caller's task list first.
func onList[In any](lists Lists, run listRun[In]) func(context.Context, *tool.Env, In) (tool.Result, error) {
	return func(ctx context.Context, env *tool.Env, in In) (tool.Result, error) {
		if env == nil || env.Team == "" {
			return tool.Result{}, tool.Failure(errNoTeam)
		}
		l, err := lists.Tasks(env.Team)
		if err != nil {
			return tool.Result{}, forModel(err)
		}
		return run(ctx, env, l, in)
	}
}

// invalid renders an input of the tool name that does not decode.
func invalid(name string) func(error) tool.Result {
	return func(err error) tool.Result { return tool.Errorf("Invalid %s input: %v.", name, err) }
}

// errNoTeam is the text of the result for an agent outside any team.
const errNoTeam = "not a team member; create or join a team first"

// forModel turns the errors a model can act on into tool.Failures with the
// text it reads. Anything else (lock timeouts, I/O, cancellation) is
// infrastructure and is returned as it is.
func forModel(err error) error {
	var fe *jsonfile.Error
	switch {
	case errors.Is(err, ErrGone):
		return tool.Failf("Your team no longer exists (%v).", err)
	case errors.Is(err, ErrTaskNotFound), errors.Is(err, ErrInvalidTask),
		errors.Is(err, ErrCycle), errors.Is(err, ErrBlocked),
		errors.Is(err, ErrClaimed), errors.Is(err, ErrCompleted),
		errors.As(err, &fe):
		return tool.Failure(capitalize(err.Error()) + ".")
	}
	return err
}

// capitalize starts a sentence for the model with a capital letter.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
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

var createSchema = tool.Object(
	tool.Required("subject", tool.String("Short imperative title, e.g. \"Add retry to the HTTP client\".").WithMinLength(1).WithMaxLength(maxSubjectLen)),
	tool.Required("description", tool.String("What has to be done and how to tell it is done, in enough detail for a teammate to start without asking.")),
	tool.Optional("activeForm", tool.String("Label shown while someone works on the task, e.g. \"Adding retry to the HTTP client\".")),
	tool.Optional("metadata", metadataSchema),
)

const createDescription = "Adds a task to your team's shared task list, which every member of the team can read and take work from. " +
	"Give a short imperative subject and a description detailed enough for a teammate to do the work without asking; " +
	"activeForm is the label shown while the task is in progress. " +
	"A new task is pending and unowned; use TaskUpdate to give it an owner or to record which tasks must finish first."

// createTask is TaskCreate: it adds a task to the team's list.
func createTask(ctx context.Context, _ *tool.Env, l *List, in CreateInput) (tool.Result, error) {
	t, err := l.Create(ctx, TaskSpec{
		Subject: in.Subject, Description: in.Description, ActiveForm: in.ActiveForm, Metadata: in.Metadata,
	})
	if err != nil {
		return tool.Result{}, forModel(err)
	}
	return tool.Result{Content: []llm.Block{llm.Text(fmt.Sprintf("Created task #%s: %s", t.ID, oneLine(t.Subject)))}, Meta: t}, nil
}

// GetInput is TaskGet's input.
type GetInput struct {
	TaskID string `json:"taskId"`
}

var getSchema = tool.Object(
	tool.Required("taskId", tool.String("Id of the task, as shown by TaskList (e.g. \"3\").")),
)

const getDescription = "Shows one task of your team's shared task list in full: subject, status, owner, description, " +
	"the tasks it waits for and the tasks waiting for it. Read a task this way before you start on it."

// getTask is TaskGet: it shows one task in full.
func getTask(ctx context.Context, _ *tool.Env, l *List, in GetInput) (tool.Result, error) {
	t, err := l.Get(ctx, normalizeID(in.TaskID))
	if err != nil {
		return tool.Result{}, forModel(err)
	}
	return tool.Result{Content: []llm.Block{llm.Text(renderTask(&t))}, Meta: t}, nil
}

const listDescription = "Lists your team's shared tasks, one line each: id, status, owner, subject, and the unfinished tasks it is blocked by. " +
	"A pending task with no owner that is not blocked is free to take. Look here when you finish a task to find the next one."

// listTasks is TaskList: one line per task. A task file that cannot be read is
// named in the listing rather than failing it.
func listTasks(ctx context.Context, _ *tool.Env, l *List, _ struct{}) (tool.Result, error) {
	tasks, err := l.List(ctx)
	var fe *jsonfile.Error
	if err != nil && !errors.As(err, &fe) {
		return tool.Result{}, forModel(err)
	}
	return tool.Result{Content: []llm.Block{llm.Text(renderList(tasks, err))}, Meta: tasks}, nil
}
