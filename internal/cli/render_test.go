package cli

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/flags"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// TestRenderAgents: the table cohort agents prints, every definition with
// where it comes from and which one is in force.
func TestRenderAgents(t *testing.T) {
	t.Parallel()
	rows := []cohort.AgentDefinition{
		{Name: "Explore", Source: "project", File: "/repo/.claude/agents/explore.md", Active: true},
		{Name: "Explore", Source: "built-in", Model: "haiku", OverriddenBy: "/repo/.claude/agents/explore.md"},
		{Name: "general-purpose", Source: "built-in", Active: true},
		{Name: "Plan", Source: "built-in", Active: true},
		{Name: "reviewer", Source: "user", Model: "opus", File: "/home/u/.cohort/agents/reviewer.md", Active: true},
		{Name: "reviewer", Source: "user", Model: "sonnet", File: "/home/u/.claude/agents/reviewer.md", OverriddenBy: "/home/u/.cohort/agents/reviewer.md"},
		{Name: "writer", Source: "cli", Model: "haiku", File: "--agents", Active: true},
		{Name: "writer", Source: "project", File: "/repo/.cohort/agents/a/writer.md", OverriddenBy: "--agents"},
		{Name: "writer", Source: "project", File: "/repo/.cohort/agents/b/writer.md", OverriddenBy: "--agents"},
		{Name: "zeta", Source: "project", File: "/repo/.claude/agents/zeta.md", Active: true},
	}
	var buf bytes.Buffer
	if err := renderAgents(&buf, rows); err != nil {
		t.Fatal(err)
	}
	golden(t, "agents.golden", buf.Bytes())
}

// TestRenderFlags: the table cohort flags prints, a header and one line per
// flag with its value, the source that set it, its default and what it does.
func TestRenderFlags(t *testing.T) {
	t.Parallel()
	s, err := flags.Resolve(flags.Config{
		Settings: []flags.Settings{{Path: "/home/u/.cohort/settings.json", Flags: map[string]any{flags.AutoDream: false}}},
		Environ:  []string{"COHORT_FLAG_AUTO_DREAM_MIN_HOURS=12"},
		CLI:      []string{"fork_subagent=on"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var rows []cohort.Flag
	for _, v := range s.List() {
		rows = append(rows, cohort.Flag{Name: v.Name, Value: v.String(), Source: v.Source, Default: v.DefaultValue(), Description: v.Description})
	}
	var buf bytes.Buffer
	if err := renderFlags(&buf, rows); err != nil {
		t.Fatal(err)
	}
	golden(t, "flags.golden", buf.Bytes())
	if n := strings.Count(buf.String(), "\n"); n != len(flags.Defs())+1 {
		t.Errorf("rendered %d lines, want a header and one per flag", n)
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}
