package agentdef

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func def(name string, src Source, model string) *Definition {
	return &Definition{Name: name, Description: "d", Model: model, Source: src}
}

func sampleCatalog() *Catalog {
	defs := BuiltIns(nil)
	return NewCatalog(append(defs,
		def("reviewer", Source{Level: LevelUser, Path: "/home/u/.claude/agents/reviewer.md", Claude: true}, "sonnet"),
		def("reviewer", Source{Level: LevelUser, Path: "/home/u/.cohort/agents/reviewer.md"}, "opus"),
		def("Explore", Source{Level: LevelProject, Path: "/repo/.claude/agents/explore.md", Claude: true}, ""),
		def("writer", Source{Level: LevelProject, Path: "/repo/.cohort/agents/a/writer.md"}, ""),
		def("writer", Source{Level: LevelProject, Path: "/repo/.cohort/agents/b/writer.md"}, ""),
		def("writer", Source{Level: LevelCLI, Path: CLIPath}, "haiku"),
		def("zeta", Source{Level: LevelProject, Path: "/repo/.claude/agents/zeta.md", Claude: true}, ""),
	))
}

func TestCatalogWinners(t *testing.T) {
	cat := sampleCatalog()
	var got []string
	for _, d := range cat.List() {
		got = append(got, d.Name+" "+d.Source.String())
	}
	want := []string{
		"Explore project /repo/.claude/agents/explore.md",
		"general-purpose built-in",
		"Plan built-in",
		"reviewer user /home/u/.cohort/agents/reviewer.md",
		"writer cli --agents",
		"zeta project /repo/.claude/agents/zeta.md",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if _, ok := cat.Get("explore"); ok {
		t.Error("names are case-sensitive, but Get found explore")
	}
	if d, ok := cat.Get("writer"); !ok || d.Model != "haiku" {
		t.Errorf("Get(writer) = %+v", d)
	}
	if len(cat.All()) != len(want)+4 {
		t.Errorf("All lists %d entries", len(cat.All()))
	}
}

func TestCatalogTieKeepsFirst(t *testing.T) {
	a := def("x", Source{Level: LevelProject, Path: "/r/a.md"}, "")
	b := def("x", Source{Level: LevelProject, Path: "/r/b.md"}, "")
	for _, order := range [][]*Definition{{a, b}, {b, a}} {
		if got, _ := NewCatalog(order).Get("x"); got != order[0] {
			t.Errorf("tie went to %s", got.Source.Path)
		}
	}
}

func TestCatalogCopies(t *testing.T) {
	cat := sampleCatalog()
	cat.List()[0] = nil
	cat.All()[0].Active = false
	if cat.List()[0] == nil || !cat.All()[0].Active {
		t.Error("List or All exposes the catalog's storage")
	}
}
