package workflow

import (
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// An agent() without a model takes its phase's model from meta.phases; its
// own model wins.
func TestPhaseModel(t *testing.T) {
	var mu sync.Mutex
	models := map[string]string{}
	sp := &scripted{answer: func(req AgentRequest) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		models[req.Prompt] = req.Model
		return "ok", nil
	}}
	src := `export const meta = {name: "m", description: "d", phases: [{title: "scan", model: "haiku"}, {title: "judge"}]}
phase("scan")
await agent("in scan")
await agent("in scan, own model", {model: "opus"})
await agent("judge it", {phase: "judge"})
phase("other")
await agent("elsewhere")
return null`
	runJSON(t, src, Config{Spawner: sp})
	want := map[string]string{"in scan": "haiku", "in scan, own model": "opus", "judge it": "", "elsewhere": ""}
	if d := cmp.Diff(want, models); d != "" {
		t.Errorf("models (-want +got):\n%s", d)
	}
}
