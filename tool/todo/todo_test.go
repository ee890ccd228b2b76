package todo

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/cohort-dev/cohort/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func write(t *testing.T, tw *TodoWrite, agent string, items []Item) tool.Result {
	t.Helper()
	raw, err := json.Marshal(map[string]any{"todos": items})
	if err != nil {
		t.Fatal(err)
	}
	if err := tool.ValidateInput(tw.Def().InputSchema, raw); err != nil {
		t.Fatalf("input does not match the schema: %v", err)
	}
	res, err := tw.Run(t.Context(), &tool.Env{Caller: tool.Caller{ID: agent}}, raw)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestTodoWrite(t *testing.T) {
	var events []string
	tw := New(Config{OnChange: func(agent string, items []Item) {
		events = append(events, fmt.Sprintf("%s:%d", agent, len(items)))
	}})
	plan := []Item{
		{Content: "Read the code", Status: Completed, ActiveForm: "Reading the code"},
		{Content: "Fix the bug", Status: InProgress, ActiveForm: "Fixing the bug"},
		{Content: "Run the tests", Status: Pending, ActiveForm: "Running the tests"},
	}
	res := write(t, tw, "lead", plan)
	if res.IsError || !strings.HasPrefix(res.TextOf(), "Task list updated.") {
		t.Errorf("result = %q", res.TextOf())
	}
	if diff := cmp.Diff(plan, tw.List("lead")); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	if got := tw.List("sub-1"); got != nil {
		t.Errorf("another agent sees %v", got)
	}

	// The list is a copy: changing it does not change the store.
	l := tw.List("lead")
	l[0].Content = "changed"
	if tw.List("lead")[0].Content != "Read the code" {
		t.Errorf("List returned shared memory")
	}

	two := []Item{{"a", InProgress, "doing a"}, {"b", InProgress, "doing b"}}
	res = write(t, tw, "sub-1", two)
	// Several items in progress are normal for a lead whose agents work
	// in parallel: no reminder argues with that.
	if strings.Contains(res.TextOf(), "in_progress") {
		t.Errorf("a note about two in progress: %q", res.TextOf())
	}
	if m := res.Meta.(Change); m.Old != nil || len(m.New) != 2 {
		t.Errorf("meta = %+v", m)
	}

	done := []Item{{"a", Completed, "doing a"}, {"b", Completed, "doing b"}}
	res = write(t, tw, "sub-1", done)
	if res.TextOf() != "Task list updated: every task is completed, so the list has been cleared." {
		t.Errorf("result = %q", res.TextOf())
	}
	if got := tw.List("sub-1"); got != nil {
		t.Errorf("completed list kept: %v", got)
	}
	if m := res.Meta.(Change); len(m.Old) != 2 || m.New != nil {
		t.Errorf("meta = %+v", m)
	}

	write(t, tw, "lead", []Item{})
	if got := tw.List("lead"); got != nil {
		t.Errorf("empty write kept %v", got)
	}
	if diff := cmp.Diff([]string{"lead:3", "sub-1:2", "sub-1:0", "lead:0"}, events); diff != "" {
		t.Errorf("OnChange (-want +got):\n%s", diff)
	}
	write(t, tw, "x", two)
	tw.Forget("x")
	if tw.List("x") != nil {
		t.Errorf("Forget kept the list")
	}
}

func TestTodoSchema(t *testing.T) {
	tw := New(Config{})
	for _, bad := range []string{
		`{}`,
		`{"todos":[{"content":"a","status":"done","activeForm":"b"}]}`,
		`{"todos":[{"content":"a","status":"pending"}]}`,
		`{"todos":[{"content":"","status":"pending","activeForm":"b"}]}`,
		`{"todos":[{"content":"a","status":"pending","activeForm":"b","priority":"high"}]}`,
	} {
		if err := tool.ValidateInput(tw.Def().InputSchema, json.RawMessage(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
	if tr := tw.Traits(nil); !tr.ReadOnly || !tr.ConcurrencySafe || tw.Def().Name != "TodoWrite" {
		t.Errorf("Def/Traits wrong")
	}
}

func TestTodoConcurrentAgents(t *testing.T) {
	tw := New(Config{})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			agent := fmt.Sprintf("a%d", i)
			for j := range 20 {
				raw, _ := json.Marshal(map[string]any{"todos": []Item{{fmt.Sprint(j), Pending, "x"}}})
				if _, err := tw.Run(t.Context(), &tool.Env{Caller: tool.Caller{ID: agent}}, raw); err != nil {
					t.Error(err)
				}
				_ = tw.List(agent)
			}
		}()
	}
	wg.Wait()
	for i := range 8 {
		if got := tw.List(fmt.Sprintf("a%d", i)); len(got) != 1 || got[0].Content != "19" {
			t.Errorf("agent %d: %v", i, got)
		}
	}
}
