package agentdef

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// hookTypes are the hook entry types Claude Code's schema accepts. Cohort
// runs only "command"; the others load (and are skipped with a warning
// when the hooks are wired) so that an agent file shared with Claude Code
// still loads.
var hookTypes = []string{"command", "prompt", "agent", "http"}

// checkHooks validates the shape of a definition's hooks block the way
// Claude Code's schema does: a mapping of event names to lists of groups,
// each group a mapping with an optional matcher and a "hooks" list of
// entries, each entry a mapping with a known "type" and the field that type
// needs. Claude Code refuses to load an agent whose hooks do not fit, and
// so does Cohort: loading the agent without its hooks would run it without
// the guards its author wrote (failing open). Event names are not checked
// here; the hook package reports the ones it does not fire.
func (dc *decoder) checkHooks(v *yaml.Node) bool {
	if isNull(v) {
		return true
	}
	if v.Kind != yaml.MappingNode {
		dc.errorf(v, "hooks: want a mapping of event names to lists of matcher groups, got %s", kindName(v))
		return false
	}
	ok := true
	for i := 0; i+1 < len(v.Content); i += 2 {
		ev, groups := deref(v.Content[i]), deref(v.Content[i+1])
		key := "hooks." + ev.Value
		if isNull(groups) {
			continue
		}
		if groups.Kind != yaml.SequenceNode {
			dc.errorf(groups, "%s: want a list of groups (- matcher: \"Bash\" with a hooks: list under it), got %s", key, kindName(groups))
			ok = false
			continue
		}
		for gi, g := range groups.Content {
			ok = dc.checkHookGroup(fmt.Sprintf("%s[%d]", key, gi), deref(g)) && ok
		}
	}
	return ok
}

func (dc *decoder) checkHookGroup(key string, g *yaml.Node) bool {
	if g.Kind != yaml.MappingNode {
		dc.errorf(g, "%s: want a group with matcher: and hooks:, got %s", key, kindName(g))
		return false
	}
	var list *yaml.Node
	ok := true
	for i := 0; i+1 < len(g.Content); i += 2 {
		k, val := deref(g.Content[i]), deref(g.Content[i+1])
		switch k.Value {
		case "matcher":
			if !isNull(val) && val.Kind != yaml.ScalarNode {
				dc.errorf(val, "%s.matcher: want text such as \"Write|Edit\", got %s", key, kindName(val))
				ok = false
			}
		case "hooks":
			list = val
		}
	}
	if list == nil {
		dc.errorf(g, `%s: the group has no "hooks" list; put the command in one (hooks: [{type: command, command: "…"}]). Claude Code refuses this agent too`, key)
		return false
	}
	if list.Kind != yaml.SequenceNode {
		dc.errorf(list, "%s.hooks: want a list of {type: command, command: \"…\"} entries, got %s", key, kindName(list))
		return false
	}
	for i, e := range list.Content {
		ok = dc.checkHookEntry(fmt.Sprintf("%s.hooks[%d]", key, i), deref(e)) && ok
	}
	return ok
}

func (dc *decoder) checkHookEntry(key string, e *yaml.Node) bool {
	if e.Kind != yaml.MappingNode {
		dc.errorf(e, "%s: want {type: command, command: \"…\"}, got %s", key, kindName(e))
		return false
	}
	fields := map[string]*yaml.Node{}
	for i := 0; i+1 < len(e.Content); i += 2 {
		fields[deref(e.Content[i]).Value] = deref(e.Content[i+1])
	}
	typ := fields["type"]
	if typ == nil || typ.Kind != yaml.ScalarNode || !slices.Contains(hookTypes, typ.Value) {
		dc.errorf(or(typ, e), "%s.type: want one of %s", key, strings.Join(hookTypes, ", "))
		return false
	}
	need := map[string]string{"command": "command", "prompt": "prompt", "agent": "prompt", "http": "url"}[typ.Value]
	if f := fields[need]; f == nil || f.Kind != yaml.ScalarNode || strings.TrimSpace(f.Value) == "" {
		dc.errorf(or(f, e), "%s.%s: a %s hook needs %s: as text", key, need, typ.Value, need)
		return false
	}
	if t := fields["timeout"]; t != nil && !isNull(t) {
		if secs, err := strconv.ParseFloat(t.Value, 64); t.Kind != yaml.ScalarNode || err != nil || secs <= 0 {
			dc.errorf(t, "%s.timeout: want a number of seconds above 0, got %s", key, kindName(t))
			return false
		}
	}
	return true
}
