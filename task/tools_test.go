package task

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/tool"
)

var lead = &tool.Env{Caller: tool.Caller{Depth: 0}}

func run(t *testing.T, tl tool.Tool, env *tool.Env, input string) tool.Result {
	t.Helper()
	if err := tool.ValidateInput(tl.Def().InputSchema, json.RawMessage(input)); err != nil {
		return tool.Errorf("schema: %v", err)
	}
	res, err := tl.Run(t.Context(), env, json.RawMessage(input))
	if err != nil {
		t.Fatalf("%s(%s): %v", tl.Def().Name, input, err)
	}
	return res
}

func TestToolDefs(t *testing.T) {
	for _, tl := range []tool.Tool{NewOutputTool(nil, nil), NewStopTool(nil)} {
		d := tl.Def()
		var schema map[string]any
		if err := json.Unmarshal(d.InputSchema, &schema); err != nil || d.Description == "" {
			t.Fatalf("%s: bad def: %v", d.Name, err)
		}
		if string(tl.Def().InputSchema) != string(d.InputSchema) {
			t.Fatalf("%s: schema bytes not stable", d.Name)
		}
	}
	if NewOutputTool(nil, nil).Def().Name != "TaskOutput" || NewStopTool(nil).Def().Name != "TaskStop" {
		t.Fatal("tool names must match Claude Code's")
	}
	if !NewOutputTool(nil, nil).Traits(nil).ReadOnly || NewStopTool(nil).Traits(nil).ReadOnly {
		t.Fatal("traits")
	}
}

func TestUnknownTaskListsRunning(t *testing.T) {
	r, _ := newReg(t, func(c *Config) { c.Rand = seeded(3) })
	release := make(chan struct{})
	defer close(release)
	a, _ := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "Audit auth", Name: "auditor", Background: true}, block(release, ""))
	b, _ := r.Start(t.Context(), Spec{Kind: KindLocalBash, Command: "make test", Background: true}, block(release, ""))
	fin, _ := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "finished"}, done(""))
	waitDoneT(t, fin)
	want := fmt.Sprintf("No task found with id or name \"nope\". Running tasks:\n"+
		"- %s (local_agent, running): Audit auth [name: auditor]\n"+
		"- %s (local_bash, running): make test", a.ID(), b.ID())
	for _, tc := range []struct {
		tl    tool.Tool
		input string
	}{
		{NewOutputTool(r, nil), `{"task_id":"nope"}`},
		{NewStopTool(r), `{"task_id":"nope"}`},
		{NewStopTool(r), `{"shell_id":"nope"}`},
	} {
		res := run(t, tc.tl, lead, tc.input)
		if !res.IsError {
			t.Fatalf("%s: not an error", tc.tl.Def().Name)
		}
		if diff := cmp.Diff(want, res.TextOf()); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.tl.Def().Name, diff)
		}
	}
	empty, _ := newReg(t, nil)
	if got := UnknownTask(empty, "x").TextOf(); got != `No task found with id or name "x". No tasks are running.` {
		t.Fatalf("empty registry: %q", got)
	}
}

func TestTaskOutputStates(t *testing.T) {
	r, _ := newReg(t, nil)
	q := NewQueue()
	out := NewOutputTool(r, func(string) *Queue { return q })
	release, wrote := make(chan struct{}), make(chan struct{})
	tk, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "d", Background: true, Queue: q},
		func(ctx context.Context, tk *Task) (Outcome, error) {
			tk.Output().WriteLine("step one")
			tk.Output().WriteLine("step two")
			close(wrote)
			<-release
			return Outcome{Text: "final answer"}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	<-wrote
	res := run(t, out, lead, fmt.Sprintf(`{"task_id":%q,"block":false}`, tk.ID()))
	want := fmt.Sprintf("<retrieval_status>not_ready</retrieval_status>\n<task_id>%s</task_id>\n<task_type>local_agent</task_type>\n<status>running</status>\n<output>\nstep one\nstep two\n</output>", tk.ID())
	if diff := cmp.Diff(want, res.TextOf()); diff != "" || res.IsError {
		t.Fatalf("non-blocking (-want +got):\n%s", diff)
	}
	close(release)
	res = run(t, out, lead, fmt.Sprintf(`{"task_id":%q}`, tk.ID()))
	want = fmt.Sprintf("<retrieval_status>success</retrieval_status>\n<task_id>%s</task_id>\n<task_type>local_agent</task_type>\n<status>completed</status>\n<output>\nfinal answer\n</output>", tk.ID())
	if diff := cmp.Diff(want, res.TextOf()); diff != "" {
		t.Fatalf("blocking (-want +got):\n%s", diff)
	}
	if st, ok := res.Meta.(State); !ok || st.Status != StatusCompleted {
		t.Fatalf("meta %#v", res.Meta)
	}
	<-tk.Done()
	if q.Len() != 0 {
		t.Fatal("the result was read through TaskOutput but is still queued as a notification")
	}
}

func TestTaskOutputTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, _ := newReg(t, nil)
		release := make(chan struct{})
		exitCode := 1
		tk, err := r.Start(t.Context(), Spec{Kind: KindLocalBash, Command: "sleep 100", Background: true},
			func(ctx context.Context, tk *Task) (Outcome, error) {
				tk.Output().WriteLine("zzz")
				<-release
				return Outcome{ExitCode: &exitCode}, nil
			})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		res := run(t, NewOutputTool(r, nil), lead, fmt.Sprintf(`{"task_id":%q,"timeout":1500}`, tk.ID()))
		if time.Since(start) != 1500*time.Millisecond || !strings.HasPrefix(res.TextOf(), "<retrieval_status>timeout</retrieval_status>") {
			t.Fatalf("after %s: %s", time.Since(start), res.TextOf())
		}
		start = time.Now()
		run(t, NewOutputTool(r, nil), lead, fmt.Sprintf(`{"task_id":%q}`, tk.ID()))
		if time.Since(start) != 30*time.Second {
			t.Fatalf("default timeout waited %s", time.Since(start))
		}
		close(release)
		<-tk.Done()
		res = run(t, NewOutputTool(r, nil), lead, fmt.Sprintf(`{"task_id":%q}`, tk.ID()))
		want := fmt.Sprintf("<retrieval_status>success</retrieval_status>\n<task_id>%s</task_id>\n<task_type>local_bash</task_type>\n<status>failed</status>\n<exit_code>1</exit_code>\n<output>\nzzz\n</output>\n<error>exit code 1</error>", tk.ID())
		if diff := cmp.Diff(want, res.TextOf()); diff != "" {
			t.Fatalf("(-want +got):\n%s", diff)
		}
		closeReg(t, r)
	})
}

func TestTaskOutputLongTail(t *testing.T) {
	r, _ := newReg(t, nil)
	tk, err := r.Start(t.Context(), Spec{Kind: KindLocalBash, Command: "yes", Background: true},
		func(ctx context.Context, tk *Task) (Outcome, error) {
			for i := range 1000 {
				tk.Output().WriteLine(fmt.Sprintf("%04d %s", i, strings.Repeat("y", 95)))
			}
			return Outcome{}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	waitDoneT(t, tk)
	text := run(t, NewOutputTool(r, nil), lead, fmt.Sprintf(`{"task_id":%q}`, tk.ID())).TextOf()
	if len(text) > maxOutputChars+1000 || !strings.Contains(text, "earlier lines omitted") ||
		!strings.Contains(text, tk.State().OutputFile) || !strings.Contains(text, "0999 yyy") {
		t.Fatalf("long output rendered as %d chars: %.300q", len(text), text)
	}
}

func TestToolInputErrors(t *testing.T) {
	r, _ := newReg(t, nil)
	tests := []struct {
		tl    tool.Tool
		env   *tool.Env
		input string
		want  string
	}{
		{NewOutputTool(r, nil), &tool.Env{Caller: tool.Caller{Depth: 1}}, `{"task_id":"x"}`, "only available to the main agent"},
		{NewStopTool(r), &tool.Env{Caller: tool.Caller{Depth: 2}}, `{"task_id":"x"}`, "only available to the main agent"},
		{NewOutputTool(r, nil), lead, `{"task_id":""}`, "needs a task_id"},
		{NewStopTool(r), lead, `{}`, "needs a task_id"},
		{NewOutputTool(r, nil), lead, `{"task_id":"x","timeout":-1}`, "between 0 and 600000"},
		{NewOutputTool(r, nil), lead, `{"task_id":"x","timeout":600001}`, "between 0 and 600000"},
		{NewOutputTool(r, nil), lead, `{"task_id":7}`, "Invalid TaskOutput input"},
		{NewStopTool(r), lead, `[]`, "Invalid TaskStop input"},
	}
	for _, tc := range tests {
		res, err := tc.tl.Run(t.Context(), tc.env, json.RawMessage(tc.input))
		if err != nil || !res.IsError || !strings.Contains(res.TextOf(), tc.want) {
			t.Errorf("%s(%s) = %q, %v; want is_error containing %q", tc.tl.Def().Name, tc.input, res.TextOf(), err, tc.want)
		}
	}
}

func TestTaskStopTool(t *testing.T) {
	r, _ := newReg(t, nil)
	stop := NewStopTool(r)
	tk, err := r.Start(t.Context(), Spec{Kind: KindLocalBash, Command: "sleep 1000", Description: "Sleep", Background: true, Name: "sleeper"}, block(nil, ""))
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, stop, lead, `{"task_id":"sleeper"}`)
	want := fmt.Sprintf(`{"message":"Successfully stopped task: %s (Sleep)","task_id":"%s","task_type":"local_bash","command":"sleep 1000"}`, tk.ID(), tk.ID())
	if res.IsError || res.TextOf() != want {
		t.Fatalf("TaskStop = %q", res.TextOf())
	}
	select {
	case <-tk.Done():
	default:
		t.Fatal("TaskStop returned before the task ended")
	}
	res = run(t, stop, lead, fmt.Sprintf(`{"shell_id":%q}`, tk.ID()))
	if !res.IsError || !strings.Contains(res.TextOf(), "is not running (status: killed)") {
		t.Fatalf("second TaskStop = %q", res.TextOf())
	}
}

func TestTaskStopTimeoutIsReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, _ := newReg(t, func(c *Config) { c.StopTimeout = time.Second })
		release := make(chan struct{})
		tk, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "d", Background: true},
			func(context.Context, *Task) (Outcome, error) { <-release; return Outcome{}, nil })
		if err != nil {
			t.Fatal(err)
		}
		res := run(t, NewStopTool(r), lead, fmt.Sprintf(`{"task_id":%q}`, tk.ID()))
		if !res.IsError || !strings.Contains(res.TextOf(), "has not finished yet") {
			t.Fatalf("TaskStop = %q", res.TextOf())
		}
		close(release)
		<-tk.Done()
		closeReg(t, r)
	})
}
