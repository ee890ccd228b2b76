package team

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/tasklist"
	"github.com/cohort-dev/cohort/tool"
)

func TestTaskToolsConversation(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	mustCreate(t, s, "alpha")
	for _, n := range []string{"alice", "bob"} {
		if _, err := s.AddMember(t.Context(), "alpha", MemberSpec{Name: n}); err != nil {
			t.Fatal(err)
		}
	}
	tools := map[string]tool.Tool{}
	for _, tl := range tasklist.Tools(s.TaskLists()) {
		tools[tl.Def().Name] = tl
	}
	steps := []struct {
		agent, tool, input string
		want               string
		isError            bool
	}{
		{"alice", "TaskList", `{}`, "No tasks yet.", false},
		{"alice", "TaskCreate", `{"subject":"Design the schema","description":"Tables and keys."}`, "Created task #1: Design the schema", false},
		{"alice", "TaskCreate", `{"subject":"Write the parser","description":"From the schema.","activeForm":"Writing the parser"}`, "Created task #2: Write the parser", false},
		{"alice", "TaskUpdate", `{"taskId":"2","addBlockedBy":["1"]}`, "Updated task #2 (blockedBy).\n#2 pending: Write the parser [blocked by #1]", false},
		{"bob", "TaskUpdate", `{"taskId":"2","status":"in_progress"}`, "Task #2 is blocked by #1 (pending); it can start once that task is completed.", true},
		{"bob", "TaskUpdate", `{"taskId":"#1","status":"in_progress"}`, "Updated task #1 (status).\n#1 in_progress (bob): Design the schema", false},
		{"alice", "TaskUpdate", `{"taskId":"1","status":"in_progress"}`, "Task #1 is already claimed by bob.", true},
		{"alice", "TaskList", ``, "#1 in_progress (bob): Design the schema\n#2 pending: Write the parser [blocked by #1]", false},
		{"bob", "TaskUpdate", `{"taskId":"1","status":"completed"}`, "Updated task #1 (status).\n#1 completed (bob): Design the schema\nNow unblocked:\n#2 pending: Write the parser", false},
		{"alice", "TaskGet", `{"taskId":"2"}`, "Task #2: Write the parser\nStatus: pending\nOwner: none\nActive form: Writing the parser\nBlocked by: #1 (done)\nDescription:\nFrom the schema.", false},
		{"alice", "TaskUpdate", `{"taskId":"2","addBlocks":["1"]}`, "Dependency cycle: #2 cannot block #1 because #2 already waits for it (#1 blocks #2).", true},
		{"alice", "TaskUpdate", `{"taskId":"9","subject":"x"}`, "No such task: #9.", true},
		{"alice", "TaskUpdate", `{"taskId":"2","owner":"bobb"}`, `"bobb" is not an active member of team alpha; set owner to a member's name, or leave it out to take the task yourself.`, true},
		{"alice", "TaskUpdate", `{"taskId":"2","owner":"alice","metadata":{"area":"parser"}}`, "Updated task #2 (owner, metadata).\n#2 pending (alice): Write the parser", false},
		{"alice", "TaskGet", `{"taskId":"abc"}`, `Invalid task: task id "abc": use the number shown in the task list, such as "3".`, true},
		{"alice", "TaskCreate", `{"subject":7}`, "Invalid TaskCreate input: json: cannot unmarshal number into Go struct field CreateInput.subject of type string.", true},
		{"alice", "TaskUpdate", `{"taskId":"2","status":"deleted"}`, "Deleted task #2.", false},
		{"alice", "TaskList", `{}`, "#1 completed (bob): Design the schema", false},
	}
	for i, st := range steps {
		env := &tool.Env{Caller: tool.Caller{Team: "alpha", Name: st.agent}}
		res, err := tools[st.tool].Run(t.Context(), env, json.RawMessage(st.input))
		if err != nil {
			t.Fatalf("step %d (%s %s): %v", i, st.tool, st.input, err)
		}
		if diff := cmp.Diff(st.want, res.TextOf()); diff != "" || res.IsError != st.isError {
			t.Errorf("step %d (%s by %s, %s): isError %v, want %v; text (-want +got):\n%s", i, st.tool, st.agent, st.input, res.IsError, st.isError, diff)
		}
	}
}

func TestTaskToolsOutsideTeam(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	for _, tl := range tasklist.Tools(s.TaskLists()) {
		for _, env := range []*tool.Env{nil, {Caller: tool.Caller{Name: "alice"}}} {
			res, err := tl.Run(t.Context(), env, json.RawMessage(`{"taskId":"1","subject":"s","description":"d"}`))
			if err != nil || !res.IsError || res.TextOf() != "not a team member; create or join a team first" {
				t.Errorf("%s without a team: %q, %v, %v", tl.Def().Name, res.TextOf(), res.IsError, err)
			}
		}
		res, err := tl.Run(t.Context(), &tool.Env{Caller: tool.Caller{Team: "gone", Name: "alice"}}, json.RawMessage(`{"taskId":"1"}`))
		if err != nil || !res.IsError {
			t.Errorf("%s in a missing team: %q, %v", tl.Def().Name, res.TextOf(), err)
		}
	}
}

func TestTaskToolDefinitions(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	wantNames := []string{"TaskCreate", "TaskGet", "TaskUpdate", "TaskList"}
	wantReadOnly := []bool{false, true, false, true}
	var names []string
	for i, tl := range tasklist.Tools(s.TaskLists()) {
		d1, d2 := tl.Def(), tl.Def()
		names = append(names, d1.Name)
		if !bytes.Equal(d1.InputSchema, d2.InputSchema) || d1.Description != d2.Description {
			t.Errorf("%s: Def is not deterministic", d1.Name)
		}
		if !json.Valid(d1.InputSchema) || d1.Description == "" {
			t.Errorf("%s: bad definition", d1.Name)
		}
		tr := tl.Traits(nil)
		if tr.ReadOnly != wantReadOnly[i] || tr.ConcurrencySafe != wantReadOnly[i] {
			t.Errorf("%s: traits %+v", d1.Name, tr)
		}
	}
	if diff := cmp.Diff(wantNames, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	update := tasklist.Tools(s.TaskLists())[2].Def().InputSchema
	for input, ok := range map[string]bool{
		`{"taskId":"1","status":"deleted","addBlocks":["2"],"addBlockedBy":["3"],"owner":"a","metadata":{"k":1}}`: true,
		`{"taskId":"1","status":"done"}`: false,
		`{"taskId":"1","bogus":true}`:    false,
		`{"status":"completed"}`:         false,
	} {
		if err := tool.ValidateInput(update, json.RawMessage(input)); (err == nil) != ok {
			t.Errorf("TaskUpdate input %s: %v, want ok=%v", input, err, ok)
		}
	}
}
