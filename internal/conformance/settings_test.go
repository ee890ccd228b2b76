package conformance

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestSettingsFilesAsClaudeCodeAppliesThem runs the scripted sequence under
// every settings file of the corpus and compares each step's outcome with
// expected/settings.json.
func TestSettingsFilesAsClaudeCodeAppliesThem(t *testing.T) {
	dir := corpus(t)
	var want struct {
		Settings map[string]outcome `json:"settings"`
	}
	readJSON(t, filepath.Join(dir, "expected", "settings.json"), &want)
	ok := readAccepted(t, dir)
	if len(want.Settings) == 0 {
		t.Fatal("expected/settings.json lists no files")
	}
	names := make([]string, 0, len(want.Settings))
	for name := range want.Settings {
		names = append(names, name)
	}
	slices.Sort(names)
	_, pyErr := exec.LookPath("python3")

	var mu sync.Mutex
	var same, excused int
	var fails, unchecked []string
	t.Run("files", func(t *testing.T) {
		for _, name := range names {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				data, err := os.ReadFile(filepath.Join(dir, "settings", name))
				if err != nil {
					t.Fatal(err)
				}
				if pyErr != nil && bytes.Contains(data, []byte("python3 ")) {
					mu.Lock()
					unchecked = append(unchecked, name)
					mu.Unlock()
					t.Logf("NOT CHECKED: %s runs hooks through python3, which is not installed here, so its outcome cannot match Claude Code's record", name)
					return
				}
				got, output := runSettings(t, data)
				exp := want.Settings[name]
				mu.Lock()
				defer mu.Unlock()
				switch reason, listed := ok.Settings[name]; {
				case got == exp:
					same++
					if listed {
						t.Logf("%s now matches Claude Code; its entry in accepted.json (%s) can go", name, reason)
					}
				case listed:
					excused++
					t.Logf("accepted divergence: Claude Code %s %s, Cohort %s %s (%s)", exp.Verdict, exp.Steps, got.Verdict, got.Steps, reason)
				default:
					fails = append(fails, fmt.Sprintf("%s: Claude Code %s %s, Cohort %s %s", name, exp.Verdict, exp.Steps, got.Verdict, got.Steps))
					t.Logf("cohort's output:\n%s", output)
				}
			})
		}
	})
	t.Logf("settings files: %d of %d treated as Claude Code treats them, %d accepted divergences, %d failures, %d not checked (%s)",
		same, len(names), excused, len(fails), len(unchecked), strings.Join(unchecked, ", "))
	if len(fails) > 0 {
		t.Errorf("%d settings files are treated differently from Claude Code (steps Write Read Edit Grep Glob Bash):\n%s",
			len(fails), strings.Join(fails, "\n"))
	}
}

// runSettings runs the sequence with data as the project's
// .claude/settings.json.
func runSettings(t *testing.T, data []byte) (outcome, string) {
	sc := newScenario(t)
	path := filepath.Join(sc.project, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return sc.run()
}
