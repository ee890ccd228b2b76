package relay

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// toolDef is one tool definition as sent, with a hash of it.
type toolDef struct {
	tool fakeapi.Tool
	sum  [32]byte
}

func toolDefs(tools []fakeapi.Tool) []toolDef {
	out := make([]toolDef, len(tools))
	for i, t := range tools {
		t.CacheControl = nil // a marker is not part of the definition
		raw, _ := json.Marshal(t)
		out[i] = toolDef{tool: t, sum: sha256.Sum256(raw)}
	}
	return out
}

func sameDefs(a, b []toolDef) bool {
	return slices.EqualFunc(a, b, func(x, y toolDef) bool { return x.sum == y.sum })
}

// toolArray is a tool array the player has been shown, and the agent it
// was first shown for.
type toolArray struct {
	owner string
	defs  []toolDef
}

// toolbook remembers the tool arrays and definitions shown, so each
// definition is written out once and later arrays are described by what
// differs.
type toolbook struct {
	shown  map[[32]byte]bool
	arrays []toolArray
}

// describe writes the tools of an agent's request: for a new agent (prev
// nil) the array it equals or differs least from; for a known one what
// changed since prev. Definitions not shown before follow in full. It
// reports whether it wrote anything.
func (tb *toolbook) describe(w *strings.Builder, label string, defs, prev []toolDef) bool {
	if tb.shown == nil {
		tb.shown = map[[32]byte]bool{}
	}
	if prev != nil && sameDefs(defs, prev) {
		return false
	}
	base, owner := prev, "its last request's"
	if prev == nil {
		base, owner = tb.closest(defs)
	}
	switch {
	case len(defs) == 0:
		fmt.Fprintf(w, "No tools.\n")
	case base != nil && sameDefs(defs, base):
		fmt.Fprintf(w, "The same %s as %s.\n", tools(len(defs)), strings.TrimSuffix(owner, "'s"))
	case base != nil:
		fmt.Fprintf(w, "%s: %s, %s.\n", tools(len(defs)), owner, toolDiff(defs, base))
	default:
		fmt.Fprintf(w, "%s: %s.\n", tools(len(defs)), strings.Join(names(defs), ", "))
	}
	for _, d := range defs {
		if !tb.shown[d.sum] {
			tb.shown[d.sum] = true
			writeDefinition(w, d.tool)
		}
	}
	if !slices.ContainsFunc(tb.arrays, func(a toolArray) bool { return sameDefs(a.defs, defs) }) {
		tb.arrays = append(tb.arrays, toolArray{owner: label, defs: defs})
	}
	return true
}

// closest returns the known array sharing the most definitions with defs,
// and its owner's name with 's.
func (tb *toolbook) closest(defs []toolDef) ([]toolDef, string) {
	var best *toolArray
	bestCommon := 0
	for i := range tb.arrays {
		a := &tb.arrays[i]
		common := 0
		for _, d := range defs {
			if slices.ContainsFunc(a.defs, func(x toolDef) bool { return x.sum == d.sum }) {
				common++
			}
		}
		if common > bestCommon || sameDefs(a.defs, defs) {
			best, bestCommon = a, common
			if sameDefs(a.defs, defs) {
				break
			}
		}
	}
	if best == nil {
		return nil, ""
	}
	return best.defs, best.owner + "'s"
}

// toolDiff says how defs differ from base: tools dropped, added, changed.
func toolDiff(defs, base []toolDef) string {
	var without, added, changed []string
	for _, b := range base {
		if !slices.ContainsFunc(defs, func(d toolDef) bool { return d.tool.Name == b.tool.Name }) {
			without = append(without, b.tool.Name)
		}
	}
	for _, d := range defs {
		i := slices.IndexFunc(base, func(b toolDef) bool { return b.tool.Name == d.tool.Name })
		switch {
		case i < 0:
			added = append(added, d.tool.Name)
		case base[i].sum != d.sum:
			changed = append(changed, d.tool.Name)
		}
	}
	var parts []string
	if len(without) > 0 {
		parts = append(parts, "without "+strings.Join(without, ", "))
	}
	if len(added) > 0 {
		parts = append(parts, "with "+strings.Join(added, ", ")+" added")
	}
	if len(changed) > 0 {
		parts = append(parts, strings.Join(changed, ", ")+" changed")
	}
	if len(parts) == 0 {
		return "in another order: " + strings.Join(names(defs), ", ")
	}
	return strings.Join(parts, "; ")
}

func tools(n int) string {
	if n == 1 {
		return "1 tool"
	}
	return fmt.Sprintf("%d tools", n)
}

func names(defs []toolDef) []string {
	out := make([]string, len(defs))
	for i, d := range defs {
		out[i] = d.tool.Name
	}
	return out
}

// writeDefinition writes a tool's full definition.
func writeDefinition(w *strings.Builder, t fakeapi.Tool) {
	fmt.Fprintf(w, "\n### %s", t.Name)
	if t.Type != "" && t.Type != "custom" {
		fmt.Fprintf(w, " (%s)", t.Type)
	}
	w.WriteString("\n\n")
	if t.Description != "" {
		fenced(w, "text", t.Description)
	}
	if len(t.InputSchema) > 0 {
		var buf bytes.Buffer
		if json.Indent(&buf, t.InputSchema, "", "  ") != nil {
			buf.Reset()
			buf.Write(t.InputSchema)
		}
		w.WriteString("\nInput schema:\n\n")
		fenced(w, "json", buf.String())
	}
}
