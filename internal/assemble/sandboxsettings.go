package assemble

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/settings"
)

// The settings "sandbox" block is read key by key, so that one bad or
// foreign key costs only itself: Claude Code's own block (network as an
// object, autoAllowBashIfSandboxed, filesystem, …) keeps its
// excludedCommands and enabled, and what Cohort does not apply is named.
//
// Keys, Claude Code's and Cohort's:
//   - enabled, excludedCommands: Claude Code's, applied.
//   - allowUnsandboxedCommands: Claude Code's, applied (permission.
//     Unsandboxed): absent, dangerouslyDisableSandbox asks a person in
//     every mode; false ignores it; true is Claude Code's behaviour.
//   - allowWrite, allowUnixSockets: Cohort's (extra writable roots; Unix
//     sockets commands may connect to).
//   - network: "allow" or "deny" (Cohort's: "deny" gives commands a
//     network namespace of their own), or Claude Code's object, of which
//     allowUnixSockets is applied; its domain filter and proxy ports need
//     a filtering proxy Cohort does not have, and are reported as not
//     applied.
//   - In a file obeyed only as a person approved its content
//     (settings.Source.Approved: it lies where agents' commands write),
//     only what narrows is applied: "enabled": true, "network": "deny",
//     "allowUnsandboxedCommands": false. What would let a command out of
//     the sandbox or widen it (enabled false, excludedCommands,
//     allowUnsandboxedCommands true, allowWrite, allowUnixSockets, a
//     network allowance) is reported and not applied, as its "env" is not
//     (settingsEnv): the approval covers the file's bytes, not the
//     Makefile, script or module such a key would run with the user's
//     rights, which agents can rewrite beside it.
//   - Claude Code's other keys (autoAllowBashIfSandboxed,
//     enableWeakerNestedSandbox,
//     failIfUnavailable, filesystem, ignoreViolations,
//     excludedCommandsPolicy) are accepted and reported as not applied.
var (
	sandboxKeys       = []string{"enabled", "excludedCommands", "allowUnsandboxedCommands", "allowWrite", "allowUnixSockets", "network"}
	claudeSandboxKeys = []string{"autoAllowBashIfSandboxed", "enableWeakerNestedSandbox",
		"failIfUnavailable", "filesystem", "ignoreViolations", "excludedCommandsPolicy"}
)

// sandboxConfig reads the settings' sandbox blocks. A block that is not an
// object, and each key that does not decode, is reported with its file and
// line and ignored: the sandbox then stays on with its defaults for it.
func (b *Plan) sandboxConfig() sandboxConf {
	c := sandboxConf{enabled: true}
	for _, sec := range b.Settings.Loaded.Section("sandbox") {
		where := fmt.Sprintf("%s:%d", sec.Source.Path, sec.Line)
		var keys map[string]json.RawMessage
		if err := json.Unmarshal(sec.Value, &keys); err != nil || keys == nil {
			c.problems = append(c.problems, fmt.Sprintf("%s: \"sandbox\" must be an object (keys %s); it is ignored and the sandbox stays on with its defaults", where, strings.Join(sandboxKeys, ", ")))
			continue
		}
		bad := func(key, want string) {
			c.problems = append(c.problems, fmt.Sprintf("%s: sandbox.%s must be %s; it is ignored and the sandbox stays on with its default for it", where, key, want))
		}
		for _, key := range slices.Sorted(maps.Keys(keys)) {
			raw := keys[key]
			if sec.Source.Approved && widens(key, raw) {
				c.problems = append(c.problems, fmt.Sprintf("%s: sandbox.%s is not applied: this file is obeyed because you approved its content, but it lies where agents' commands write, and the approval does not cover what the key would let run or write outside the sandbox; set it in your user or the project's .cohort/settings.json instead", where, key))
				continue
			}
			switch key {
			case "enabled":
				var v bool
				if strict(raw, &v) != nil {
					bad(key, "true or false")
					continue
				}
				c.enabled, c.enabledSrc = v, where
			case "allowUnsandboxedCommands":
				var v bool
				if strict(raw, &v) != nil {
					bad(key, "true or false")
					continue
				}
				c.unsandboxed = map[bool]permission.Unsandboxed{true: permission.UnsandboxedAllowed, false: permission.UnsandboxedIgnored}[v]
			case "excludedCommands", "allowWrite", "allowUnixSockets":
				var v []string
				if strict(raw, &v) != nil {
					bad(key, "a list of strings")
					continue
				}
				c.addList(b, key, v, sec.Source.Root)
			case "network":
				c.network(b, where, raw, sec.Source.Root, bad)
			default:
				if slices.Contains(claudeSandboxKeys, key) {
					c.problems = append(c.problems, fmt.Sprintf("%s: sandbox.%s is Claude Code's and Cohort does not apply it (the rest of the block is applied)", where, key))
					continue
				}
				c.problems = append(c.problems, fmt.Sprintf("%s: sandbox.%s is not a sandbox key (ignored); the keys are %s", where, key, strings.Join(sandboxKeys, ", ")))
			}
		}
	}
	c.approvedEnv(b)
	return c
}

func (c *sandboxConf) addList(b *Plan, key string, v []string, root string) {
	switch key {
	case "excludedCommands":
		c.excluded = append(c.excluded, v...)
	case "allowWrite":
		for _, w := range v {
			c.allowWrite = append(c.allowWrite, b.settingsPath(w, root))
		}
	case "allowUnixSockets":
		for _, u := range v {
			c.allowUnixSockets = append(c.allowUnixSockets, b.settingsPath(u, root))
		}
	}
}

// network reads sandbox.network: Cohort's "allow"/"deny", or Claude
// Code's object.
func (c *sandboxConf) network(b *Plan, where string, raw json.RawMessage, root string, bad func(key, want string)) {
	var mode string
	if json.Unmarshal(raw, &mode) == nil {
		switch mode {
		case "allow", "deny":
			c.denyNetwork, c.networkSrc = mode == "deny", where
		default:
			bad("network", `"allow" or "deny" (or Claude Code's network object)`)
		}
		return
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || obj == nil {
		bad("network", `"allow" or "deny" (or Claude Code's network object)`)
		return
	}
	for _, key := range slices.Sorted(maps.Keys(obj)) {
		if key != "allowUnixSockets" {
			c.problems = append(c.problems, fmt.Sprintf("%s: sandbox.network.%s is not applied: Cohort does not filter the network by domain or through a proxy (use \"network\": \"deny\" to cut it off)", where, key))
			continue
		}
		var v []string
		if strict(obj[key], &v) != nil {
			bad("network.allowUnixSockets", "a list of strings")
			continue
		}
		c.addList(b, "allowUnixSockets", v, root)
	}
}

// widens reports whether a sandbox key's value would let commands out of
// the sandbox or give them more than its defaults; an unknown or broken
// value counts as widening (the loop reports it then).
func widens(key string, raw json.RawMessage) bool {
	var on bool
	switch key {
	case "enabled":
		return strict(raw, &on) != nil || !on
	case "allowUnsandboxedCommands":
		return strict(raw, &on) != nil || on
	case "network":
		var mode string
		return json.Unmarshal(raw, &mode) != nil || mode != "deny"
	case "excludedCommands", "allowWrite", "allowUnixSockets":
		return true
	}
	return false
}

// approvedEnv reports the "env" entries of files obeyed only by approval,
// which settingsEnv leaves out.
func (c *sandboxConf) approvedEnv(b *Plan) {
	if b.Settings.Loaded == nil {
		return
	}
	for _, src := range b.Settings.Loaded.Sources {
		if !src.Approved {
			continue
		}
		vars, _ := settings.MergeObject[string](&settings.Settings{Sources: []*settings.Source{src}}, "env")
		for _, k := range slices.Sorted(maps.Keys(vars)) {
			c.problems = append(c.problems, fmt.Sprintf("%s:%d: env.%s is not applied: this file is obeyed because you approved its content, but it lies where agents' commands write, and a variable set there would reach the programs that run outside the sandbox (your hooks, MCP servers and approved commands); set it in your user or the project's .cohort/settings.json instead", src.Path, vars[k].Line, k))
		}
	}
}

// strict decodes raw into v, refusing null.
func strict(raw json.RawMessage, v any) error {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return fmt.Errorf("null")
	}
	return json.Unmarshal(raw, v)
}

// approvedOnlyDirs are the permissions.additionalDirectories that only
// files obeyed by approval (settings.Source.Approved) name, as the
// permission checker would expand them: the checker does not add them
// (permission/approved.go), and extraDirs keeps them out of the sandbox
// on its own, from the settings rather than from the checker.
func (b *Plan) approvedOnlyDirs() map[string]bool {
	if b.Settings.Loaded == nil {
		return nil
	}
	approved, persons := map[string]bool{}, map[string]bool{}
	for _, sp := range b.Settings.Loaded.Permissions() {
		for _, d := range sp.Value.AdditionalDirectories {
			if sp.Source.Approved {
				approved[b.settingsPath(d.Value, sp.Source.Root)] = true
			} else {
				persons[b.settingsPath(d.Value, sp.Source.Root)] = true
			}
		}
	}
	for _, d := range b.Permissions.AddDirs {
		persons[b.settingsPath(d, b.Process.Cwd)] = true
	}
	for d := range persons {
		delete(approved, d)
	}
	return approved
}
