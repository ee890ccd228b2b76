package assemble

import (
	"fmt"
	"slices"

	"github.com/cohort-dev/cohort/hook"
	"github.com/cohort-dev/cohort/settings"
)

// settingsEnv returns the settings "env" entries as NAME=value, sorted by
// name. They are added to the environment of Bash and hooks after
// Cohort's own (which holds no credentials): the way for a user to hand
// one of them a key on purpose.
func (b *Plan) settingsEnv() []string {
	vars, probs := settings.MergeObject[string](b.Settings.Loaded, "env")
	for _, p := range probs {
		fmt.Fprintf(b.Process.Stderr, "cohort: warning: %v\n", p)
	}
	out := make([]string, 0, len(vars))
	for k, v := range vars {
		out = append(out, k+"="+v.Value)
	}
	slices.Sort(out)
	return out
}

// hookScripts lists the files the settings' hooks execute, which are
// protected paths for the permission check and read-only in the sandbox.
func (b *Plan) hookScripts() []string {
	set, _ := hook.FromSettings(b.Settings.Loaded) // problems are reported by openHooks
	return set.Scripts(b.Process.ProjectRoot, b.Process.Cwd)
}
