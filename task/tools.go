package task

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
)

// TaskOutput limits, in milliseconds (Claude Code's).
const (
	DefaultOutputTimeoutMs = 30_000
	MaxOutputTimeoutMs     = 600_000
)

// maxOutputChars bounds the transcript tail TaskOutput shows the model.
const maxOutputChars = 30_000

// OutputInput is TaskOutput's input.
type OutputInput struct {
	TaskID  string   `json:"task_id"`
	Block   *bool    `json:"block,omitempty"`   // default true
	Timeout *float64 `json:"timeout,omitempty"` // ms, default 30000, at most 600000
}

// StopInput is TaskStop's input. ShellID is the deprecated name of TaskID.
type StopInput struct {
	TaskID  string `json:"task_id,omitempty"`
	ShellID string `json:"shell_id,omitempty"`
}

// NewOutputTool returns TaskOutput over reg: the main agent reads a
// background task's status and output, optionally waiting for it to end.
// queueOf finds the calling agent's notification queue (nil: none): a
// result read through TaskOutput is not notified again there. Reading a
// task changes nothing, so calls are read-only and concurrency-safe.
func NewOutputTool(reg *Registry, queueOf func(agentID string) *Queue) tool.Tool {
	o := &outputTool{reg: reg, queueOf: queueOf}
	return tool.New(tool.Spec[OutputInput]{
		Name: "TaskOutput",
		Description: "Reads the status and output of a background task (a background agent or shell) by its task id. " +
			"By default it waits until the task has finished, up to the timeout, and then returns its final result; " +
			"with block set to false it answers at once with the status and the most recent output. " +
			"You are told when background tasks finish, so use this only when you need a result before that.",
		Input:  outputSchema,
		Traits: tool.Traits{ReadOnly: true, ConcurrencySafe: true},
		Run:    o.run,
		Invalid: func(err error) tool.Result {
			return tool.Errorf("Invalid TaskOutput input: %v. Expected {\"task_id\": string, \"block\"?: boolean, \"timeout\"?: number}.", err)
		},
	})
}

// outputTool is TaskOutput's state.
type outputTool struct {
	reg     *Registry
	queueOf func(agentID string) *Queue
}

var outputSchema = tool.Object(
	tool.Required("task_id", tool.String("Id of the task to read.")),
	tool.Optional("block", tool.Boolean("Wait for the task to finish before answering (default true).")),
	tool.Optional("timeout", tool.Number("Longest wait in milliseconds when block is true (default 30000).").WithMin(0).WithMax(MaxOutputTimeoutMs)),
)

func (o *outputTool) run(ctx context.Context, env *tool.Env, in OutputInput) (tool.Result, error) {
	if env != nil && env.Depth > 0 {
		return tool.Errorf("TaskOutput is only available to the main agent."), nil
	}
	if in.TaskID == "" {
		return tool.Errorf("TaskOutput needs a task_id."), nil
	}
	timeout := float64(DefaultOutputTimeoutMs)
	if in.Timeout != nil {
		timeout = *in.Timeout
	}
	if timeout < 0 || timeout > MaxOutputTimeoutMs {
		return tool.Errorf("timeout must be between 0 and %d milliseconds, got %v.", MaxOutputTimeoutMs, timeout), nil
	}
	t, ok := o.reg.Get(in.TaskID)
	if !ok {
		return UnknownTask(o.reg, in.TaskID), nil
	}
	st, retrieval := t.State(), "success"
	if !st.Status.Terminal() {
		retrieval = "not_ready"
		if in.Block == nil || *in.Block {
			wctx, cancel := context.WithTimeout(ctx, time.Duration(timeout*float64(time.Millisecond)))
			var err error
			st, err = t.Wait(wctx)
			cancel()
			switch {
			case ctx.Err() != nil:
				return tool.Result{}, ctx.Err()
			case err != nil:
				retrieval = "timeout"
			default:
				retrieval = "success"
			}
		}
	}
	if st.Status.Terminal() {
		var q *Queue
		if o.queueOf != nil {
			q = o.queueOf(env.Caller.ID)
		}
		o.reg.Consume(t.ID(), q)
	}
	return tool.Result{Content: []llm.Block{llm.Text(renderOutput(retrieval, st, t.Output()))}, Meta: st}, nil
}

func renderOutput(retrieval string, st State, out *Output) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<retrieval_status>%s</retrieval_status>\n", retrieval)
	fmt.Fprintf(&b, "<task_id>%s</task_id>\n<task_type>%s</task_type>\n<status>%s</status>\n", st.ID, st.Kind, st.Status)
	if r := st.Result; r != nil && r.ExitCode != nil {
		fmt.Fprintf(&b, "<exit_code>%d</exit_code>\n", *r.ExitCode)
	}
	text := ""
	if st.Result != nil {
		text = st.Result.Text
	}
	if text == "" {
		if lines, earlier, ok := out.transcriptTail(); ok {
			text = agentText(lines, earlier, st.OutputFile) // an agent's messages (agentout.go)
		} else {
			text = tailText(out.Tail(0), st.OutputFile)
		}
	}
	if text != "" {
		fmt.Fprintf(&b, "<output>\n%s\n</output>\n", strings.TrimRight(text, "\n"))
	}
	if st.Err != "" && st.Status != StatusCompleted {
		fmt.Fprintf(&b, "<error>%s</error>\n", st.Err)
	}
	return strings.TrimRight(b.String(), "\n")
}

// tailText joins the newest lines that fit in maxOutputChars.
func tailText(lines []string, path string) string {
	n, i := 0, len(lines)
	for i > 0 && n+len(lines[i-1])+1 <= maxOutputChars {
		i--
		n += len(lines[i]) + 1
	}
	text := strings.Join(lines[i:], "\n")
	if i > 0 {
		text = fmt.Sprintf("[%d earlier lines omitted; the full output is in %s]\n%s", i, path, text)
	}
	return text
}

// NewStopTool returns TaskStop over reg: it stops a running task, or a
// named agent, and everything it started. Stopping changes state outside
// the caller, so calls are neither read-only nor concurrency-safe.
func NewStopTool(reg *Registry) tool.Tool {
	s := &stopTool{reg: reg}
	return tool.New(tool.Spec[StopInput]{
		Name: "TaskStop",
		Description: "Stops a running background task — an agent or a shell command — given its task id or the agent's name. " +
			"Anything the task started is stopped with it, and the call returns once they have all ended. " +
			"Use it when a task is no longer needed or has gone astray.",
		Input: stopSchema,
		Run:   s.run,
		Invalid: func(err error) tool.Result {
			return tool.Errorf("Invalid TaskStop input: %v. Expected {\"task_id\": string}.", err)
		},
	})
}

// stopTool is TaskStop's state.
type stopTool struct{ reg *Registry }

var stopSchema = tool.Object(
	tool.Optional("task_id", tool.String("Id of the task to stop, or the name of a running agent.")),
	tool.Optional("shell_id", tool.String("Deprecated: use task_id.")),
)

func (s *stopTool) run(ctx context.Context, env *tool.Env, in StopInput) (tool.Result, error) {
	if env != nil && env.Depth > 0 {
		return tool.Errorf("TaskStop is only available to the main agent."), nil
	}
	id := cmp.Or(in.TaskID, in.ShellID)
	if id == "" {
		return tool.Errorf("TaskStop needs a task_id."), nil
	}
	st, err := s.reg.Stop(ctx, id)
	switch {
	case errors.Is(err, ErrNotFound):
		return UnknownTask(s.reg, id), nil
	case errors.Is(err, ErrNotRunning):
		return tool.Errorf("Task %s is not running (status: %s); there is nothing to stop.", st.ID, st.Status), nil
	case errors.Is(err, ErrStopTimeout):
		return tool.Errorf("Task %s was told to stop but has not finished yet: %v", st.ID, err), nil
	case err != nil:
		return tool.Result{}, err
	}
	out, _ := json.Marshal(struct {
		Message  string `json:"message"`
		TaskID   string `json:"task_id"`
		TaskType string `json:"task_type"`
		Command  string `json:"command,omitempty"`
	}{fmt.Sprintf("Successfully stopped task: %s (%s)", st.ID, st.Description), st.ID, string(st.Kind), st.Command})
	return tool.Result{Content: []llm.Block{llm.Text(string(out))}, Meta: st}, nil
}

// UnknownTask is the is_error result for an id or name that matches no
// task: it lists the running tasks so the model can pick the right one.
func UnknownTask(reg *Registry, id string) tool.Result {
	var b strings.Builder
	fmt.Fprintf(&b, "No task found with id or name %q.", id)
	running := reg.Running()
	if len(running) == 0 {
		b.WriteString(" No tasks are running.")
	} else {
		b.WriteString(" Running tasks:")
		for _, s := range running {
			fmt.Fprintf(&b, "\n- %s (%s, %s): %s", s.ID, s.Kind, s.Status, s.Description)
			if s.Name != "" {
				fmt.Fprintf(&b, " [name: %s]", s.Name)
			}
		}
	}
	return tool.Result{Content: []llm.Block{llm.Text(b.String())}, IsError: true}
}
