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
// one of them a key on purpose. A file obeyed only as a person approved
// its content (settings.Source.Approved) sets none: it lies where agents
// write, and an entry such as PATH, BASH_ENV, PYTHONPATH or NODE_OPTIONS
// would make the user's own unsandboxed hooks, MCP servers and approved
// commands load what agents wrote there (sandboxConfig reports each).
func (b *Plan) settingsEnv() []string {
	_, probs := settings.MergeObject[string](obeyedWhole(b.Settings.Loaded), "env")
	for _, p := range probs {
		fmt.Fprintf(b.Process.Stderr, "cohort: warning: %v\n", p)
	}
	return b.settingsEnvQuiet()
}

// settingsEnvQuiet is settingsEnv without reporting problems.
func (b *Plan) settingsEnvQuiet() []string {
	vars, _ := settings.MergeObject[string](obeyedWhole(b.Settings.Loaded), "env")
	out := make([]string, 0, len(vars))
	for k, v := range vars {
		out = append(out, k+"="+v.Value)
	}
	slices.Sort(out)
	return out
}

// obeyedWhole is s without the files obeyed only by a person's approval
// of their content (settings.Source.Approved).
func obeyedWhole(s *settings.Settings) *settings.Settings {
	if s == nil {
		return nil
	}
	out := &settings.Settings{Problems: s.Problems}
	for _, src := range s.Sources {
		if !src.Approved {
			out.Sources = append(out.Sources, src)
		}
	}
	return out
}

// hookScripts lists the files the settings' hooks and the loaded agent
// definitions' own hooks execute, and the statusLine's and unconfined MCP
// servers' (configuredScripts), which are protected paths for the
// permission check and read-only in the sandbox: a definition's hook runs
// outside the sandbox as the settings' do.
func (b *Plan) hookScripts() []string {
	return append(b.hookScriptsFrom(b.Process.Cwd), b.configuredScripts()...)
}

// hookScriptsFrom is hookScripts for hooks run in cwd: relative scripts
// name the files there.
func (b *Plan) hookScriptsFrom(cwd string) []string {
	set, _ := hook.FromSettings(b.Settings.Loaded) // problems are reported by openHooks
	out := set.Scripts(b.Process.ProjectRoot, cwd)
	if b.Agents.Catalog == nil {
		return out
	}
	for _, def := range b.Agents.Catalog.List() {
		if def.Hooks != nil {
			ds, _ := hook.FromDefinition(def.Source.Path, def.Hooks) // problems are reported by openHooks
			out = append(out, ds.Scripts(b.Process.ProjectRoot, cwd)...)
		}
	}
	return out
}
