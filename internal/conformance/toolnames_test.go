package conformance

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/worktree"
)

// toolName finds the names tools give themselves: in a Def method's
// llm.ToolDef, or in the tool.Spec of a typed tool.
var toolName = regexp.MustCompile(`(?:llm\.ToolDef|tool\.Spec\[[^\]]*\])\{\s*Name:\s*"([A-Z][A-Za-z]+)"`)

// TestCohortToolsNamesEveryTool keeps agent.CohortTools complete: a tool
// missing from it would draw an "unknown tool" warning for definitions
// naming it in sessions that lack it (the team tools with agent_teams
// off, before this list existed).
func TestCohortToolsNamesEveryTool(t *testing.T) {
	root := repoRoot(t)
	found := []string{crew.AgentToolName, worktree.EnterName, worktree.ExitName}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return fs.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range toolName.FindAllSubmatch(data, -1) {
			found = append(found, string(m[1]))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) < 20 {
		t.Fatalf("found only %d tool names (%v); the pattern no longer matches how tools are defined", len(found), found)
	}
	t.Logf("%d tool definitions: %s", len(found), strings.Join(found, ", "))
	for _, name := range found {
		if !slices.Contains(agentdef.CohortTools, name) {
			t.Errorf("tool %q is not in agent.CohortTools", name)
		}
	}
}
