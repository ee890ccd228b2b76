package engine

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
)

// envProbe records the Env.Confinement of each call it runs.
type envProbe struct{ seen []tool.Confinement }

func (p *envProbe) Def() llm.ToolDef {
	return llm.ToolDef{Name: "P", InputSchema: json.RawMessage(`{"type":"object"}`)}
}
func (p *envProbe) Traits(json.RawMessage) tool.Traits { return tool.Traits{} }
func (p *envProbe) Run(_ context.Context, env *tool.Env, _ json.RawMessage) (tool.Result, error) {
	p.seen = append(p.seen, env.Confinement)
	return tool.Text("ok"), nil
}

type fixedGate Verdict

func (g fixedGate) Check(context.Context, *Call) Verdict { return Verdict(g) }

// The gate's verdict reaches the tool as Env.Confinement: a verdict that
// does not say (a gate that only allows) confines the call to reading,
// one that says ConfineWrite lets it write, and without a gate (no
// permission checks) nothing narrows it. An Env.Confinement in the agent's
// configuration does not survive the gate.
func TestConfinementFollowsTheVerdict(t *testing.T) {
	for _, tc := range []struct {
		name string
		gate Gate
		env  tool.Confinement
		want tool.Confinement
	}{
		{"no gate", nil, tool.ConfineReadOnly, tool.ConfineWrite},
		{"gate says nothing", fixedGate{Allow: true}, tool.ConfineWrite, tool.ConfineReadOnly},
		{"gate says read-only", fixedGate{Allow: true, Confinement: tool.ConfineReadOnly}, tool.ConfineWrite, tool.ConfineReadOnly},
		{"gate says write", fixedGate{Allow: true, Confinement: tool.ConfineWrite}, tool.ConfineReadOnly, tool.ConfineWrite},
	} {
		p := &envProbe{}
		step := 0
		model := replyFunc(func(*llm.Request) *llm.Response {
			if step++; step == 1 {
				return toolResp(use("t1", "P", `{}`))
			}
			return textResp("done")
		})
		a := New(Config{Model: model, Tools: []tool.Tool{p}, Gate: tc.gate, Env: tool.Env{Confinement: tc.env}})
		if _, err := a.Send(t.Context(), []llm.Block{llm.Text("go")}, ""); err != nil {
			t.Fatal(err)
		}
		if len(p.seen) != 1 || p.seen[0] != tc.want {
			t.Errorf("%s: the tool saw %v, want %v", tc.name, p.seen, tc.want)
		}
	}
}
