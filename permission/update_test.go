package permission

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/settings"
	"github.com/google/go-cmp/cmp"
)

func TestApplyInMemory(t *testing.T) {
	f := newFixture(t)
	c := f.checkerWith(ModeDefault, []string{"Bash(npm ci:*)"}, nil, nil)
	ctx := t.Context()
	expect(t, c, bash("make"), Ask)
	if err := c.AddRules(ctx, Allow, []string{"Bash(make:*)"}, DestSession); err != nil {
		t.Fatal(err)
	}
	expect(t, c, bash("make all"), Allow)
	// Adding the same rule twice keeps one copy.
	if err := c.AddRules(ctx, Allow, []string{"Bash(make:*)"}, DestSession); err != nil {
		t.Fatal(err)
	}
	if n := len(c.Rules(Allow)); n != 2 {
		t.Fatalf("allow rules = %d, want 2", n)
	}
	if err := c.Apply(ctx, RuleUpdate{Type: UpdateRemoveRules, Behavior: Allow, Destination: DestSession,
		Rules: []RuleValue{{ToolName: "Bash", RuleContent: "make:*"}}}); err != nil {
		t.Fatal(err)
	}
	expect(t, c, bash("make all"), Ask)
	if err := c.Apply(ctx, RuleUpdate{Type: UpdateReplaceRules, Behavior: Allow, Destination: DestProject,
		Rules: []RuleValue{{ToolName: "Bash", RuleContent: "go test:*"}}}); err != nil {
		t.Fatal(err)
	}
	expect(t, c, bash("npm ci"), Ask) // the project's Bash(npm ci:*) was replaced
	expect(t, c, bash("go test ./..."), Allow)
	if err := c.Apply(ctx, RuleUpdate{Type: UpdateSetMode, Mode: ModeAcceptEdits, Destination: DestSession}); err != nil || c.Mode() != ModeAcceptEdits {
		t.Fatalf("setMode: %v %v", c.Mode(), err)
	}
	if err := c.Apply(ctx, RuleUpdate{Type: UpdateAddDirectories, Directories: []string{f.path("outside")}, Destination: DestSession}); err != nil {
		t.Fatal(err)
	}
	expect(t, c, read(f.path("outside/data")), Allow)
	if err := c.Apply(ctx, RuleUpdate{Type: UpdateRemoveDirectories, Directories: []string{f.path("outside"), f.cwd}, Destination: DestSession}); err != nil {
		t.Fatal(err)
	}
	expect(t, c, read(f.path("outside/data")), Ask)
	expect(t, c, read("src/main.go"), Allow) // the session's cwd cannot be removed
}

func TestApplyRejectsInvalidUpdates(t *testing.T) {
	f := newFixture(t)
	c := f.checkerWith(ModeDefault, nil, nil, nil)
	bad := []RuleUpdate{
		{Type: "grantEverything", Destination: DestSession},
		{Type: UpdateAddRules, Behavior: "maybe", Destination: DestSession, Rules: []RuleValue{{ToolName: "Bash"}}},
		{Type: UpdateAddRules, Behavior: Allow, Destination: "everywhere", Rules: []RuleValue{{ToolName: "Bash"}}},
		{Type: UpdateAddRules, Behavior: Allow, Destination: DestSession, Rules: []RuleValue{{ToolName: "Bash", RuleContent: "x:* y"}}},
		{Type: UpdateSetMode, Mode: ModeBubble, Destination: DestSession},
		{Type: UpdateAddDirectories, Directories: []string{""}, Destination: DestSession},
	}
	for _, u := range bad {
		if err := c.Apply(t.Context(), u); err == nil {
			t.Errorf("update %+v accepted", u)
		}
	}
	expect(t, c, bash("rm x"), Ask)
}

func TestSettingsPersister(t *testing.T) {
	f := newFixture(t)
	env := f.env()
	c, err := New(Config{Env: env, Settings: settings.Load(env), Persist: SettingsPersister(env)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := c.AddRules(ctx, Allow, []string{"Bash(git push:*)", "Read(//tmp/**)"}, DestLocal); err != nil {
		t.Fatal(err)
	}
	if err := c.AddRules(ctx, Deny, []string{"Bash(rm:*)"}, DestUser); err != nil {
		t.Fatal(err)
	}
	if err := c.Apply(ctx, RuleUpdate{Type: UpdateSetMode, Mode: ModeAcceptEdits, Destination: DestProject}); err != nil {
		t.Fatal(err)
	}
	if err := c.AddRules(ctx, Allow, []string{"Bash(session:*)"}, DestSession); err != nil {
		t.Fatal(err)
	}
	local := readJSON(t, filepath.Join(f.cwd, ".cohort", "settings.local.json"))
	if diff := cmp.Diff(map[string]any{"permissions": map[string]any{"allow": []any{"Bash(git push:*)", "Read(//tmp/**)"}}}, local); diff != "" {
		t.Errorf("local file (-want +got):\n%s", diff)
	}
	user := readJSON(t, filepath.Join(f.cohortHome, "settings.json"))
	if diff := cmp.Diff(map[string]any{"permissions": map[string]any{"deny": []any{"Bash(rm:*)"}}}, user); diff != "" {
		t.Errorf("user file (-want +got):\n%s", diff)
	}
	project := readJSON(t, filepath.Join(f.cwd, ".cohort", "settings.json"))
	if diff := cmp.Diff(map[string]any{"permissions": map[string]any{"defaultMode": "acceptEdits"}}, project); diff != "" {
		t.Errorf("project file (-want +got):\n%s", diff)
	}
	// A new session sees the saved rules.
	c2 := f.checker("")
	expect(t, c2, bash("git push origin main"), Allow)
	expect(t, c2, bash("rm x"), Deny)
	expect(t, c2, bash("session x"), Ask)
	if c2.Mode() != ModeAcceptEdits {
		t.Errorf("mode = %s", c2.Mode())
	}
	// Remove and persist.
	if err := c.Apply(ctx, RuleUpdate{Type: UpdateRemoveRules, Behavior: Allow, Destination: DestLocal,
		Rules: []RuleValue{{ToolName: "Read", RuleContent: "//tmp/**"}}}); err != nil {
		t.Fatal(err)
	}
	local = readJSON(t, filepath.Join(f.cwd, ".cohort", "settings.local.json"))
	if diff := cmp.Diff(map[string]any{"permissions": map[string]any{"allow": []any{"Bash(git push:*)"}}}, local); diff != "" {
		t.Errorf("local file after remove (-want +got):\n%s", diff)
	}
}

func TestPersistFailureKeepsSessionRule(t *testing.T) {
	f := newFixture(t)
	boom := errors.New("disk full")
	c, err := New(Config{Env: f.env(), Persist: func(context.Context, RuleUpdate) error { return boom }})
	if err != nil {
		t.Fatal(err)
	}
	err = c.AddRules(t.Context(), Allow, []string{"Bash(make:*)"}, DestLocal)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "not saved") {
		t.Fatalf("err = %v", err)
	}
	expect(t, c, bash("make"), Allow)
}

func TestPersisterRefusesBrokenFile(t *testing.T) {
	f := newFixture(t)
	path := filepath.Join(f.cwd, ".cohort", "settings.local.json")
	f.write("proj/.cohort/settings.local.json", `{"permissions": [}`)
	persist := SettingsPersister(f.env())
	err := persist(t.Context(), RuleUpdate{Type: UpdateAddRules, Behavior: Allow, Destination: DestLocal, Rules: []RuleValue{{ToolName: "Read"}}})
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("err = %v", err)
	}
	if data, _ := os.ReadFile(path); string(data) != `{"permissions": [}` {
		t.Fatalf("file changed: %s", data)
	}
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
