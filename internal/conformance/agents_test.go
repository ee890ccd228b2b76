package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/agentdef"
)

// TestAgentFilesAsClaudeCodeLoadsThem loads every agent file of the corpus
// as a project agent and compares the outcome with expected/agents.tsv:
// whether Claude Code loaded it, and under which name.
func TestAgentFilesAsClaudeCodeLoadsThem(t *testing.T) {
	t.Parallel()
	dir := corpus(t)
	records := readAgentRecords(t, dir)
	ok := readAccepted(t, dir)
	if len(records) == 0 {
		t.Fatal("expected/agents.tsv lists no files")
	}
	var same, excused int
	var fails []string
	for _, rec := range records {
		got := loadOne(t, filepath.Join(dir, "agents", rec.file))
		want := expectation(rec)
		switch reason, listed := ok.Agents[rec.file]; {
		case got == want:
			same++
			if listed {
				t.Logf("%s now matches Claude Code; its entry in accepted.json (%s) can go", rec.file, reason)
			}
		case listed:
			excused++
			t.Logf("accepted divergence %s: Claude Code %s, Cohort %s (%s)", rec.file, want, got, reason)
		default:
			fails = append(fails, fmt.Sprintf("%s: Claude Code %s, Cohort %s", rec.file, want, got))
		}
	}
	t.Logf("agent files: %d of %d treated as Claude Code treats them, %d accepted divergences, %d failures",
		same, len(records), excused, len(fails))
	if len(fails) > 0 {
		t.Errorf("%d agent files are treated differently from Claude Code:\n%s", len(fails), strings.Join(fails, "\n"))
	}
}

func expectation(rec agentRecord) string {
	if !rec.load {
		return "skips it"
	}
	return fmt.Sprintf("loads it as %q", rec.name)
}

// loadOne puts one file in a fresh project's .claude/agents and reports
// what agent.Load made of it, in the words of expectation.
func loadOne(t *testing.T, src string) string {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	project := t.TempDir()
	agents := filepath.Join(project, ".claude", "agents")
	if err := os.MkdirAll(agents, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(agents, filepath.Base(src)), data, 0o644); err != nil {
		t.Fatal(err)
	}
	cat, _, _ := agentdef.Load(t.Context(), agentdef.LoadConfig{Cwd: project, ProjectRoot: project,
		ClaudeCompat: true, KnownTools: agentdef.CohortTools})
	for _, e := range cat.All() {
		if e.Definition.Source.Level == agentdef.LevelProject {
			return fmt.Sprintf("loads it as %q", e.Definition.Name)
		}
	}
	return "skips it"
}
