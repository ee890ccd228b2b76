package hook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/hook"
	"github.com/cohort-dev/cohort/settings"
	"github.com/cohort-dev/cohort/tool"
)

// A settings hook that refuses Write and Edit, bound to a subagent two
// levels down: the engine calls PreToolUse before running each tool.
func Example() {
	dir, err := os.MkdirTemp("", "hook-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	s := &settings.Settings{}
	s.Add(settings.ScopeProject, filepath.Join(dir, ".cohort", "settings.json"), dir, []byte(`{
  "hooks": {
    "PreToolUse": [
      {"matcher": "Write|Edit",
       "hooks": [{"type": "command", "command": "echo 'generated files are read-only' >&2; exit 2"}]}
    ]
  }
}`))
	set, problems := hook.FromSettings(s)
	for _, p := range problems {
		fmt.Println(p)
	}
	runner := hook.NewRunner(hook.Config{Hooks: set, ProjectDir: dir})
	hooks := runner.For(hook.Subject{Caller: tool.Caller{ID: "worker", Type: "general-purpose", Depth: 2, Cwd: dir}})

	for _, name := range []string{"Write", "Read"} {
		v := hooks.PreToolUse(context.Background(), &engine.Call{
			ID: "toolu_1", Name: name, Input: json.RawMessage(`{"file_path": "gen.go"}`), Env: &tool.Env{Caller: tool.Caller{Cwd: dir}},
		})
		fmt.Printf("%s: deny=%v %s\n", name, v.Deny, v.Reason)
	}
	// Output:
	// Write: deny=true generated files are read-only
	// Read: deny=false
}
