package assemble

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/hook"
	"github.com/cohort-dev/cohort/internal/ownread"
	"github.com/cohort-dev/cohort/mcp"
)

// The programs the user lets run outside the sandbox ("sandbox": false on
// a command hook, a stdio MCP server or the statusLine) are judged by
// hook.Judge: what each may load from a tree agents write is protected
// (hookScripts), or, when that cannot be done, it runs in the sandbox and
// the user is told why and what to change (confinedNotice). The same
// judgement runs in every session, so a program refused once is refused
// in the session that would run it.
//
// The roots agents write are the session's: its cwd, the project and the
// added directories. An added directory is another project the user also
// works in: the unconfined programs its own configuration names (its
// .mcp.json and settings files, read as they lie) are protected here too,
// since a session there would run them (addedDirPrograms).

// writableRoots are the roots agents of the session write, absolute: the
// project, the cwd, the added directories (Permissions.AddDirs and the settings'
// permissions.additionalDirectories) and the sandbox.allowWrite roots.
func (b *Plan) writableRoots() []string {
	out := []string{b.Process.ProjectRoot, b.Process.Cwd}
	add := func(d, base string) {
		if rest, ok := strings.CutPrefix(d, "~/"); ok && b.Process.Paths.Home != "" {
			d = filepath.Join(b.Process.Paths.Home, rest)
		}
		if !filepath.IsAbs(d) {
			d = filepath.Join(base, d)
		}
		out = append(out, filepath.Clean(d))
	}
	for _, d := range b.Permissions.AddDirs {
		add(d, b.Process.Cwd)
	}
	if b.Settings.Loaded != nil {
		for _, p := range b.Settings.Loaded.Permissions() {
			for _, d := range p.Value.AdditionalDirectories {
				add(d.Value, p.Source.Root)
			}
		}
	}
	for _, d := range b.sandboxConfig().allowWrite {
		add(d, b.Process.Cwd)
	}
	return out
}

// judge is hook.Judge for a program of the session, run in its cwd.
func (b *Plan) judge(cmd string, env []string) hook.Verdict {
	return hook.Judge(cmd, append(b.settingsEnvQuiet(), env...), b.Process.ProjectRoot, b.Process.Cwd, b.writableRoots())
}

// confinedNotice is what the user is told about an entry with "sandbox":
// false that runs in the sandbox all the same (hook.Verdict.Refusal).
func confinedNotice(what, why string) string {
	return fmt.Sprintf(`%s has "sandbox": false but runs in the sandbox: %s. To run it unconfined, keep what it runs in a folder of its own below the project's top (not the top itself, which agents write), have no code there name paths outside that folder, and start Python with -P (or PYTHONSAFEPATH=1 in its env) so it does not import from the working directory`, what, why)
}

// mcpJudged confines the unconfined servers of specs that the judgement
// refuses (their "sandbox" key is dropped), reporting each to warn.
func (b *Plan) mcpJudged(specs []mcp.Spec, warn func(string)) []mcp.Spec {
	for i, s := range specs {
		if !s.Unconfined() {
			continue
		}
		if v := b.judge(hook.CommandLine(s.Command, s.Args...), envList(s.Env)); v.Refusal != "" {
			specs[i].Sandbox = nil
			if warn != nil {
				warn(confinedNotice(fmt.Sprintf("MCP server %q (%s)", s.Name, s.Source), v.Refusal))
			}
		}
	}
	return specs
}

// hooksJudged confines the unsandboxed hooks of set that the judgement
// refuses, reporting each to warn.
func (b *Plan) hooksJudged(set *hook.Set, warn func(string)) {
	for _, c := range set.Unsandboxed() {
		if v := b.judge(c.Cmd, nil); v.Refusal != "" {
			c.Unsandboxed = false
			if warn != nil {
				warn(confinedNotice(fmt.Sprintf("the %s hook %q (from %s)", c.Event, c.Cmd, c.Source), v.Refusal))
			}
		}
	}
}

// unconfinedProtected are the paths the judgement protects for the
// session's unconfined programs and those of its added directories.
func (b *Plan) unconfinedProtected() []string {
	var out []string
	set, _ := hook.FromSettings(b.Settings.Loaded)
	for _, c := range set.Unsandboxed() {
		out = append(out, b.judge(c.Cmd, nil).Protect...)
	}
	if sl := b.statusLine(); sl.Unconfined {
		out = append(out, b.judge(sl.Command, nil).Protect...)
	}
	for _, s := range b.mcpSpecsQuiet() {
		if s.Unconfined() {
			out = append(out, b.judge(hook.CommandLine(s.Command, s.Args...), envList(s.Env)).Protect...)
		}
	}
	return append(out, b.addedDirPrograms()...)
}

// addedDirPrograms are what the unconfined programs of each added
// directory's own configuration load (its .mcp.json and settings files
// there: every entry with "sandbox": false and a command), judged as a
// session there would, with the session's roots as the writable ones.
func (b *Plan) addedDirPrograms() []string {
	roots := b.writableRoots()
	var out []string
	for _, d := range roots[2:] {
		if d == b.Process.ProjectRoot || d == b.Process.Cwd {
			continue
		}
		for _, name := range []string{".mcp.json", ".claude/settings.json", ".claude/settings.local.json", ".cohort/settings.json", ".cohort/settings.local.json"} {
			data, err := ownread.Config(filepath.Join(d, name), 0)
			if err != nil {
				continue
			}
			var doc any
			if json.Unmarshal(data, &doc) != nil {
				continue
			}
			for _, p := range optedOut(doc) {
				out = append(out, hook.Judge(p.line, p.env, d, d, roots).Protect...)
			}
		}
	}
	return out
}

// program is one entry with "sandbox": false: its command line and env.
type program struct {
	line string
	env  []string
}

// optedOut finds, anywhere in a configuration document, the objects with
// "sandbox": false and a "command" (a hook, a server, a statusLine).
func optedOut(doc any) []program {
	var out []program
	switch v := doc.(type) {
	case map[string]any:
		if sb, ok := v["sandbox"].(bool); ok && !sb {
			if cmd, ok := v["command"].(string); ok && cmd != "" {
				var args []string
				if list, ok := v["args"].([]any); ok {
					for _, a := range list {
						if s, ok := a.(string); ok {
							args = append(args, s)
						}
					}
				}
				line := cmd // a hook's or statusLine's shell line
				if _, isServer := v["args"]; isServer {
					line = hook.CommandLine(cmd, args...)
				}
				env := map[string]string{}
				if m, ok := v["env"].(map[string]any); ok {
					for k, x := range m {
						if s, ok := x.(string); ok {
							env[k] = s
						}
					}
				}
				out = append(out, program{line: line, env: envList(env)})
			}
		}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			out = append(out, optedOut(v[k])...)
		}
	case []any:
		for _, x := range v {
			out = append(out, optedOut(x)...)
		}
	}
	return out
}

// envList is an env map as NAME=value entries, sorted.
func envList(env map[string]string) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}
