package settings

import "fmt"

// Permissions is the "permissions" section of one source. Rule strings are
// not parsed here (the permission package does that, so it can name the
// rule and its position when one is invalid).
type Permissions struct {
	Allow, Ask, Deny []Text
	// DefaultMode is the mode named by "defaultMode" (Value "" when unset).
	// A non-string value is passed on as its JSON text so that the mode
	// parser rejects it with the position.
	DefaultMode Text
	// AdditionalDirectories are extra working directories, as written.
	AdditionalDirectories []Text
	// DisableBypass is set by "disableBypassPermissionsMode": "disable" (and,
	// failing closed, by any value other than false or null).
	DisableBypass bool
	// Incomplete means deny or ask rules of this source may be missing: the
	// file is broken or a rule list has the wrong shape. The permission
	// package then auto-allows nothing.
	Incomplete bool
}

// Permissions returns the permissions section of every source that has one
// or is broken, lowest precedence first.
func (s *Settings) Permissions() []Sourced[Permissions] {
	var out []Sourced[Permissions]
	for _, src := range s.Sources {
		n := src.field("permissions")
		if n == nil && !src.perm.Incomplete {
			continue
		}
		sp := Sourced[Permissions]{Value: src.perm, Source: src}
		if n != nil {
			sp.Line, sp.Col = lineCol(src.data, n.start)
		}
		out = append(out, sp)
	}
	return out
}

// readPermissions validates the shape of the permissions section and
// records problems. Wrong shapes fail closed: a bad allow list is dropped,
// a bad deny or ask list marks the source incomplete.
func (s *Settings) readPermissions(src *Source) Permissions {
	var p Permissions
	n := src.field("permissions")
	if n == nil {
		return p
	}
	if n.kind != '{' {
		s.Problems = append(s.Problems, src.problemAt(n, "permissions",
			fmt.Sprintf("must be an object like {\"allow\": [...], \"deny\": [...]}, not %s; Cohort asks before every tool call until it is fixed", n.kindName())))
		p.Incomplete = true
		return p
	}
	var ok bool
	p.Allow, _ = s.stringList(src, n, "allow", "it is ignored")
	const failClosed = "Cohort asks before every tool call until it is fixed"
	if p.Deny, ok = s.stringList(src, n, "deny", failClosed); !ok {
		p.Incomplete = true
	}
	if p.Ask, ok = s.stringList(src, n, "ask", failClosed); !ok {
		p.Incomplete = true
	}
	p.AdditionalDirectories, _ = s.stringList(src, n, "additionalDirectories", "it is ignored")
	if m := n.fields["defaultMode"]; m != nil {
		line, col := lineCol(src.data, m.start)
		v := m.str
		if m.kind != 's' {
			v = string(m.raw(src.data))
		}
		p.DefaultMode = Text{Value: v, Line: line, Col: col}
	}
	if d := n.fields["disableBypassPermissionsMode"]; d != nil {
		switch {
		case d.kind == 's' && d.str == "disable":
			p.DisableBypass = true
		case d.kind == 'v' && (d.str == "false" || d.str == "null"):
		default:
			p.DisableBypass = true
			s.Problems = append(s.Problems, src.problemAt(d, "permissions.disableBypassPermissionsMode",
				`the only accepted value is "disable"; bypassPermissions mode is disabled until it is fixed`))
		}
	}
	return p
}

// stringList reads an optional array of strings. ok is false when the key
// is present with the wrong shape or holds a non-string entry.
func (s *Settings) stringList(src *Source, parent *node, key, consequence string) (out []Text, ok bool) {
	n := parent.fields[key]
	if n == nil || (n.kind == 'v' && n.str == "null") {
		return nil, true // null holds no rules
	}
	path := "permissions." + key
	if n.kind != '[' {
		s.Problems = append(s.Problems, src.problemAt(n, path,
			fmt.Sprintf("must be an array of strings, not %s; %s", n.kindName(), consequence)))
		return nil, false
	}
	ok = true
	for i, it := range n.items {
		if it.kind != 's' {
			s.Problems = append(s.Problems, src.problemAt(it, fmt.Sprintf("%s[%d]", path, i),
				fmt.Sprintf("must be a string such as \"Bash(git diff:*)\", not %s; %s", it.kindName(), consequence)))
			ok = false
			continue
		}
		line, col := lineCol(src.data, it.start)
		out = append(out, Text{Value: it.str, Line: line, Col: col})
	}
	return out, ok
}
