package settings_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/cohort-dev/cohort/settings"
)

func ExampleLoad() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	env := settings.Env{Home: filepath.Join(dir, "home"), CohortHome: filepath.Join(dir, "home", ".cohort"), Cwd: filepath.Join(dir, "proj")}
	write := func(path, data string) {
		os.MkdirAll(filepath.Dir(path), 0o755)
		os.WriteFile(path, []byte(data), 0o644)
	}
	write(filepath.Join(env.CohortHome, "settings.json"), `{"model": "sonnet", "env": {"A": "1"}}`)
	write(filepath.Join(env.Cwd, ".cohort", "settings.json"), `{"model": "opus", "permissions": {"deny": ["Bash(rm:*)"]}}`)
	write(filepath.Join(env.Cwd, ".cohort", "settings.local.json"), "{\n  \"env\": {\"A\": 2}\n}")

	s := settings.Load(env)
	model, _, _ := settings.Winner[string](s, "model")
	fmt.Println("model:", model.Value, "from", filepath.Base(filepath.Dir(model.Source.Path))+"/"+filepath.Base(model.Source.Path))
	for _, p := range s.Permissions() {
		fmt.Println("deny:", p.Value.Deny[0].Value, "line", p.Value.Deny[0].Line)
	}
	_, probs := settings.MergeObject[string](s, "env")
	fmt.Println("problem:", filepath.Base(probs[0].Path), probs[0].Line, probs[0].Key)
	// Output:
	// model: opus from .cohort/settings.json
	// deny: Bash(rm:*) line 1
	// problem: settings.local.json 2 env.A
}
