package agentdef

import (
	"cmp"
	"slices"
	"strings"
)

// Entry is one loaded definition and whether it is the one in force for its
// name.
type Entry struct {
	Definition *Definition
	Active     bool
	// OverriddenBy is the source of the definition in force, when !Active.
	OverriddenBy Source
}

// Catalog holds the loaded definitions. It is immutable after NewCatalog or
// Load and safe for concurrent use; the definitions it hands out are shared
// and must not be modified.
type Catalog struct {
	active  map[string]*Definition
	winners []*Definition // sorted by name
	entries []Entry       // sorted by name, the winner first, then by precedence
}

// NewCatalog builds a catalog from definitions in load order. For each name
// the definition with the highest precedence wins (built-in < user <
// project < CLI, and within user and project a .cohort file beats a .claude
// one); between equals the earlier one wins.
func NewCatalog(defs []*Definition) *Catalog {
	c := &Catalog{active: map[string]*Definition{}}
	for _, d := range defs {
		if cur, ok := c.active[d.Name]; !ok || d.Source.rank() > cur.Source.rank() {
			c.active[d.Name] = d
		}
	}
	for _, d := range c.active {
		c.winners = append(c.winners, d)
	}
	slices.SortFunc(c.winners, func(a, b *Definition) int { return compareNames(a.Name, b.Name) })

	for _, d := range defs {
		win := c.active[d.Name]
		e := Entry{Definition: d, Active: win == d}
		if !e.Active {
			e.OverriddenBy = win.Source
		}
		c.entries = append(c.entries, e)
	}
	slices.SortStableFunc(c.entries, func(a, b Entry) int {
		if n := compareNames(a.Definition.Name, b.Definition.Name); n != 0 {
			return n
		}
		if a.Active != b.Active {
			if a.Active {
				return -1
			}
			return 1
		}
		return cmp.Compare(b.Definition.Source.rank(), a.Definition.Source.rank())
	})
	return c
}

// compareNames orders names case-insensitively, ties broken bytewise, so
// "Explore" sorts beside "explorer" rather than before every lower-case name.
func compareNames(a, b string) int {
	if n := strings.Compare(strings.ToLower(a), strings.ToLower(b)); n != 0 {
		return n
	}
	return strings.Compare(a, b)
}

// Get returns the definition in force for name (names are case-sensitive).
func (c *Catalog) Get(name string) (*Definition, bool) {
	d, ok := c.active[name]
	return d, ok
}

// List returns the definitions in force, sorted by name. The slice is a
// copy.
func (c *Catalog) List() []*Definition { return slices.Clone(c.winners) }

// All returns every loaded definition, including overridden ones, sorted by
// name with the one in force first. The slice is a copy.
func (c *Catalog) All() []Entry { return slices.Clone(c.entries) }
