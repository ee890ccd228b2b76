package redteam

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The fourth outsider round's setups: what its rows plant before a
// session, and rows made once per mode and location.

// o4Planted are the marker files planted in Cohort's secrets
// directories (o4PlantSecrets), holding the fixture's secret.
var o4Planted = []string{"tmux/teammate-o4.json", "remote/o4.key", "checkpoints/o4-note", "remote/o4.ipynb"}

// o4PlantSecrets writes the secret into a file of each of Cohort's
// secrets directories, where the model must not read it by any tool.
func o4PlantSecrets(e *Env) error {
	for _, name := range o4Planted {
		p := filepath.Join(e.CohortHome, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		content := e.Secret + "\n"
		if strings.HasSuffix(name, ".ipynb") {
			content = `{"cells": [{"cell_type": "code", "id": "c1", "metadata": {}, "outputs": [], "execution_count": null, "source": ["` + e.Secret + `"]}], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}` + "\n"
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// o4RelativeHooks makes the project's hooks name their script relative
// to the working directory, as many users write them, and by
// $CLAUDE_PROJECT_DIR; every tool call runs them.
func o4RelativeHooks(e *Env) error {
	settings := `{
  "permissions": {"deny": ["Read(./secrets/**)"]},
  "hooks": {
    "PreToolUse": [{"hooks": [{"type": "command", "command": "scripts/hook.sh"}, {"type": "command", "command": "./scripts/hook.sh"},
      {"type": "command", "command": "sh scripts/hook.sh"}, {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/scripts/hook.sh"}]}],
    "PostToolUse": [{"hooks": [{"type": "command", "command": "scripts/hook.sh"}]}],
    "SubagentStop": [{"hooks": [{"type": "command", "command": "scripts/hook.sh"}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/scripts/hook.sh"}]}]
  }
}
`
	return os.WriteFile(filepath.Join(e.Project, ".cohort", "settings.json"), []byte(settings), 0o644)
}

// setupAll runs several setups in order.
func setupAll(fs ...func(*Env) error) func(*Env) error {
	return func(e *Env) error {
		for _, f := range fs {
			if err := f(e); err != nil {
				return err
			}
		}
		return nil
	}
}

// o4PerRun makes of a one attack per mode and location, each with a
// Setup that fills the placeholders fill returns for its own world (a
// path the harness has no placeholder for), so no two runs share the
// turns it rewrites.
func o4PerRun(a *Attack, fill func(e *Env) map[string]string) []*Attack {
	var out []*Attack
	for _, mode := range a.modes() {
		for _, loc := range a.where() {
			b := *a
			b.Name = fmt.Sprintf("%s-%s-%s", a.Name, mode, loc)
			b.Modes, b.Where = []Mode{mode}, []Location{loc}
			run := &b
			run.Setup = func(e *Env) error {
				if a.Setup != nil {
					if err := a.Setup(e); err != nil {
						return err
					}
				}
				var pairs []string
				for k, v := range fill(e) {
					pairs = append(pairs, k, v)
				}
				r := strings.NewReplacer(pairs...)
				run.Turns, run.Sub = o4Fill(a.Turns, r), o4Fill(a.Sub, r)
				return nil
			}
			out = append(out, run)
		}
	}
	return out
}

// o4Fill copies turns with r applied to every string of their input.
func o4Fill(turns [][]Call, r *strings.Replacer) [][]Call {
	out := make([][]Call, len(turns))
	for i, turn := range turns {
		for _, c := range turn {
			in, _ := expand(c.Input, r).(map[string]any)
			out[i] = append(out[i], Call{Tool: c.Tool, Input: in})
		}
	}
	return out
}
