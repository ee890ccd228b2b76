package agentdef

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/permission"
	"go.yaml.in/yaml/v3"
)

// decoder turns a frontmatter mapping (or one --agents JSON entry, decoded
// the same way) into a Definition, collecting warnings and errors with the
// file line of the node at fault.
type decoder struct {
	path   string
	offset int    // added to node lines; -1: the input has no lines
	prefix string // prepended to messages (`agent "x": ` for --agents)
	known  map[string]bool
	warns  []Warning
	errs   []error
}

func newDecoder(path string, offset int, prefix string, known []string) *decoder {
	dc := &decoder{path: path, offset: offset, prefix: prefix}
	if known != nil {
		dc.known = make(map[string]bool, len(known))
		for _, k := range known {
			dc.known[k] = true
		}
	}
	return dc
}

func (dc *decoder) line(n *yaml.Node) int {
	if dc.offset < 0 || n == nil || n.Line == 0 {
		return 0
	}
	return n.Line + dc.offset
}

func (dc *decoder) warnf(n *yaml.Node, format string, args ...any) {
	dc.warns = append(dc.warns, Warning{Path: dc.path, Line: dc.line(n), Message: dc.prefix + fmt.Sprintf(format, args...)})
}

func (dc *decoder) errorf(n *yaml.Node, format string, args ...any) {
	line := dc.line(n)
	if line == 0 && dc.offset >= 0 {
		line = 1
	}
	dc.errs = append(dc.errs, &ParseError{Path: dc.path, Line: line, Message: dc.prefix + fmt.Sprintf(format, args...)})
}

func (dc *decoder) err() error { return errors.Join(dc.errs...) }

// definition fills d from the mapping m. cli marks an --agents entry: it
// carries the prompt in a "prompt" key instead of a body, and its name is the
// entry's key (preset in d.Name; a "name" field must agree).
func (dc *decoder) definition(m *yaml.Node, d *Definition, cli bool) {
	m = deref(m)
	if m.Kind != yaml.MappingNode {
		dc.errorf(m, "want a mapping of key: value lines, got %s", kindName(m))
		return
	}
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := deref(m.Content[i]), deref(m.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			dc.errorf(k, "keys must be plain names, got %s", kindName(k))
			continue
		}
		if prev, dup := seen[k.Value]; dup {
			dc.errorf(k, "key %q is repeated (first on line %d)", k.Value, dc.line(prev))
			continue
		}
		seen[k.Value] = k
		dc.field(k, v, d, cli)
	}
	dc.require(seen, m, d, cli)
}

func (dc *decoder) field(k, v *yaml.Node, d *Definition, cli bool) {
	key := k.Value
	switch key {
	case "name":
		name, _ := dc.str(key, v)
		if cli && strings.TrimSpace(name) != d.Name {
			dc.errorf(v, "name %q differs from the entry's key %q; drop it or make them agree", name, d.Name)
			return
		}
		d.Name = name
	case "description":
		d.Description, _ = dc.str(key, v)
	case "tools":
		d.Tools, d.AgentTypes = dc.allowList(key, v)
	case "disallowedTools":
		d.DisallowedTools = dc.denyList(key, v)
	case "model":
		d.Model, _ = dc.str(key, v)
		d.Model = strings.TrimSpace(d.Model)
	case "permissionMode":
		d.PermissionMode = permission.Mode(dc.enum(key, v, permissionModes, false))
	case "maxTurns":
		d.MaxTurns = dc.positive(key, v)
	case "maxBudgetUsd":
		d.MaxBudgetUSD = dc.dollars(key, v)
	case "maxTokens":
		d.MaxTokens = int64(dc.positive(key, v))
	case "skills":
		d.Skills = dc.names(key, v)
	case "mcpServers":
		d.MCPServers = dc.jsonValue(key, v)
	case "hooks":
		if dc.checkHooks(v) {
			d.Hooks = dc.jsonValue(key, v)
		}
	case "memory":
		d.Memory = dc.enum(key, v, memoryScopes, true)
	case "background":
		d.Background = dc.boolean(key, v)
	case "effort":
		d.Effort = dc.enum(key, v, efforts, true)
	case "isolation":
		d.Isolation = dc.enum(key, v, isolations, true)
	case "color":
		d.Color = dc.color(v)
	case "initialPrompt":
		d.InitialPrompt, _ = dc.str(key, v)
	case "prompt":
		if cli {
			s, _ := dc.str(key, v)
			d.Prompt = strings.TrimSpace(s)
			return
		}
		fallthrough
	default:
		dc.warnf(k, "unknown key %q ignored", key)
	}
}

// require checks the fields every definition needs.
func (dc *decoder) require(seen map[string]*yaml.Node, m *yaml.Node, d *Definition, cli bool) {
	d.Name = strings.TrimSpace(d.Name)
	d.Description = strings.TrimSpace(d.Description)
	switch {
	case (seen["name"] == nil && !cli) || d.Name == "":
		dc.errorf(or(seen["name"], m), `"name" is required (letters, digits, "_", "-" and ".", at most 64)`)
	case !NamePattern.MatchString(d.Name):
		dc.errorf(seen["name"], "name %q is not valid: use letters, digits, \"_\", \"-\" and \".\", starting with a letter or digit, at most 64 characters", d.Name)
	}
	if seen["description"] == nil || d.Description == "" {
		dc.errorf(or(seen["description"], m), `"description" is required: say when to use this agent`)
	}
}

func or(n, fallback *yaml.Node) *yaml.Node {
	if n != nil {
		return n
	}
	return fallback
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	}
	return "nothing"
}

func isNull(n *yaml.Node) bool {
	return n.Kind == 0 || n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// str reads a scalar as text; null reads as "" (absent).
func (dc *decoder) str(key string, v *yaml.Node) (string, bool) {
	if isNull(v) {
		return "", false
	}
	if v.Kind != yaml.ScalarNode {
		dc.errorf(v, "%s: want text, got %s", key, kindName(v))
		return "", false
	}
	return v.Value, true
}

func (dc *decoder) enum(key string, v *yaml.Node, valid []string, fold bool) string {
	s, ok := dc.str(key, v)
	if !ok {
		return ""
	}
	s = strings.TrimSpace(s)
	if fold {
		s = strings.ToLower(s)
	}
	if !slices.Contains(valid, s) {
		dc.errorf(v, "%s: %q is not one of %s", key, v.Value, strings.Join(valid, ", "))
		return ""
	}
	return s
}

func (dc *decoder) color(v *yaml.Node) string {
	s, ok := dc.str("color", v)
	s = strings.ToLower(strings.TrimSpace(s))
	if !ok || slices.Contains(Colors, s) {
		return s
	}
	dc.warnf(v, "color %q is not one of %s; ignored", v.Value, strings.Join(Colors, ", "))
	return ""
}

func (dc *decoder) positive(key string, v *yaml.Node) int {
	s, ok := dc.str(key, v)
	if !ok {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n <= 0 {
		dc.errorf(v, "%s: want a whole number above 0, got %q", key, s)
		return 0
	}
	return n
}

// dollars reads a cap in US dollars: a finite number above 0.
func (dc *decoder) dollars(key string, v *yaml.Node) float64 {
	s, ok := dc.str(key, v)
	if !ok {
		return 0
	}
	f, err := strconv.ParseFloat(strings.TrimPrefix(strings.TrimSpace(s), "$"), 64)
	if err != nil || f <= 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		dc.errorf(v, "%s: want a number of US dollars above 0, such as 0.50, got %q", key, s)
		return 0
	}
	return f
}

func (dc *decoder) boolean(key string, v *yaml.Node) bool {
	var b bool
	if isNull(v) {
		return false
	}
	if v.Kind != yaml.ScalarNode || v.Decode(&b) != nil {
		dc.errorf(v, "%s: want true or false, got %s", key, kindName(v))
	}
	return b
}

// names reads a YAML list of strings or one comma-separated string.
func (dc *decoder) names(key string, v *yaml.Node) []string {
	var out []string
	rs, _ := dc.refs(key, v)
	for _, r := range rs {
		out = append(out, r.text)
	}
	return out
}

// jsonValue keeps an arbitrary YAML value in a JSON-compatible form.
func (dc *decoder) jsonValue(key string, v *yaml.Node) any {
	if isNull(v) {
		return nil
	}
	var raw any
	if err := v.Decode(&raw); err != nil {
		dc.errorf(v, "%s: %v", key, strings.TrimPrefix(err.Error(), "yaml: "))
		return nil
	}
	out, err := jsonCompatible(raw)
	if err != nil {
		dc.errorf(v, "%s: %v", key, err)
		return nil
	}
	return out
}

// jsonCompatible rewrites what yaml.v3 decodes into values encoding/json can
// marshal: maps get string keys, timestamps become RFC 3339 text.
func jsonCompatible(v any) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			c, err := jsonCompatible(e)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case map[any]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			c, err := jsonCompatible(e)
			if err != nil {
				return nil, err
			}
			out[fmt.Sprint(k)] = c
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			c, err := jsonCompatible(e)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%v cannot be represented in JSON", v)
		}
	case time.Time:
		return v.Format(time.RFC3339Nano), nil
	}
	return v, nil
}
