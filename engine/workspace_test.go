package engine

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
)

// mover is a tool that moves its own agent (as EnterWorktree does) and
// reports the cwd each call ran in.
type mover struct {
	agent *Conversation
	seen  []string
}

type refuseAll struct{}

func (refuseAll) CheckWrite(string) error { return errors.New("refused") }

func (m *mover) Def() llm.ToolDef {
	return llm.ToolDef{Name: "Move", InputSchema: json.RawMessage(`{"type":"object","properties":{"to":{"type":"string"}},"additionalProperties":false}`)}
}
func (m *mover) Traits(json.RawMessage) tool.Traits { return tool.Traits{} }
func (m *mover) Run(_ context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in struct{ To string }
	_ = json.Unmarshal(input, &in)
	m.seen = append(m.seen, env.Cwd)
	if in.To != "" {
		m.agent.SetWorkspace(in.To, refuseAll{})
		env.Cwd = "/scribbled" // a tool's copy of Env does not leak back
	}
	return tool.Text("ok"), nil
}

func TestSetWorkspaceMovesLaterCalls(t *testing.T) {
	mv := &mover{}
	turn := 0
	a := New(Config{ModelName: "m", Tools: []tool.Tool{mv}, Env: tool.Env{Caller: tool.Caller{Cwd: "/start", ID: "a1"}},
		Model: replyFunc(func(*llm.Request) *llm.Response {
			turn++
			switch turn {
			case 1:
				return toolResp(use("u1", "Move", `{}`), use("u2", "Move", `{"to":"/wt"}`), use("u3", "Move", `{}`))
			case 2:
				return toolResp(use("u4", "Move", `{}`))
			}
			return textResp("done")
		})})
	mv.agent = a
	if _, err := a.Send(t.Context(), []llm.Block{llm.Text("go")}, ""); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"/start", "/start", "/wt", "/wt"}, mv.seen); d != "" {
		t.Errorf("cwds seen by the calls (-want +got):\n%s", d)
	}
	cwd, guard := a.Workspace()
	if cwd != "/wt" || guard == nil || guard.CheckWrite("/x") == nil {
		t.Errorf("Workspace() = %q, %v", cwd, guard)
	}
	if a.ID() != "a1" {
		t.Errorf("ID() = %q after a move", a.ID())
	}
}
