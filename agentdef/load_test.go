package agentdef

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/flags"
)

// tree is a throwaway home, COHORT_HOME and project for Load.
type tree struct {
	home, cohortHome, project string
}

func newTree(t *testing.T) tree {
	t.Helper()
	base := t.TempDir()
	tr := tree{
		home:       filepath.Join(base, "home"),
		cohortHome: filepath.Join(base, "home", ".cohort"),
		project:    filepath.Join(base, "repo"),
	}
	for _, d := range []string{tr.cohortHome, filepath.Join(tr.project, ".git")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return tr
}

func (tr tree) config() LoadConfig {
	return LoadConfig{
		Cwd: filepath.Join(tr.project, "sub", "dir"), CohortHome: tr.cohortHome, Home: tr.home,
		ClaudeCompat: true, KnownTools: known,
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func agentFile(name, desc string) string {
	return fmt.Sprintf("---\nname: %s\ndescription: %s\n---\nprompt of %s\n", name, desc, desc)
}

// the places a definition can live, by a short label
func (tr tree) place(label string) string {
	switch label {
	case "user-claude":
		return filepath.Join(tr.home, ".claude", "agents")
	case "user-cohort":
		return filepath.Join(tr.cohortHome, "agents")
	case "project-claude":
		return filepath.Join(tr.project, ".claude", "agents")
	case "project-cohort":
		return filepath.Join(tr.project, ".cohort", "agents")
	}
	panic(label)
}

func TestLoadPrecedence(t *testing.T) {
	tests := []struct {
		name   string
		places []string // where a definition "x" is written; its description is the label
		cli    bool
		compat bool
		want   string // description of the winner
	}{
		{"user only", []string{"user-cohort"}, false, true, "user-cohort"},
		{"project beats user", []string{"user-cohort", "project-claude"}, false, true, "project-claude"},
		{".cohort beats .claude (user)", []string{"user-claude", "user-cohort"}, false, true, "user-cohort"},
		{".cohort beats .claude (project)", []string{"project-cohort", "project-claude"}, false, true, "project-cohort"},
		{"project .claude beats user .cohort", []string{"user-cohort", "project-claude"}, false, true, "project-claude"},
		{"all four", []string{"user-claude", "user-cohort", "project-claude", "project-cohort"}, false, true, "project-cohort"},
		{"cli beats all", []string{"user-claude", "user-cohort", "project-claude", "project-cohort"}, true, true, "cli"},
		{"compat off ignores .claude", []string{"user-cohort", "project-claude"}, false, false, "user-cohort"},
		{"compat off, only .claude", []string{"user-claude"}, false, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newTree(t)
			for _, p := range tt.places {
				writeFile(t, filepath.Join(tr.place(p), "x.md"), agentFile("x", p))
			}
			cfg := tr.config()
			cfg.ClaudeCompat = tt.compat
			if tt.cli {
				cfg.CLIJSON = `{"x": {"description": "cli", "prompt": "from the command line"}}`
			}
			cat, warns, errs := Load(t.Context(), cfg)
			if len(errs) != 0 || len(warns) != 0 {
				t.Fatalf("errors %v, warnings %v", errs, warns)
			}
			d, ok := cat.Get("x")
			if tt.want == "" {
				if ok {
					t.Fatalf("x loaded from %v", d.Source)
				}
				return
			}
			if !ok || d.Description != tt.want {
				t.Fatalf("winner %+v, want the one from %s", d, tt.want)
			}
			var all []string
			for _, e := range cat.All() {
				if e.Definition.Name == "x" {
					all = append(all, fmt.Sprintf("%s %v", e.Definition.Description, e.Active))
				}
			}
			if len(all) == 0 || all[0] != tt.want+" true" {
				t.Errorf("All() does not list the winner first: %v", all)
			}
		})
	}
}

func TestLoadBuiltInsAndOverride(t *testing.T) {
	tr := newTree(t)
	writeFile(t, filepath.Join(tr.place("project-cohort"), "explore.md"), agentFile("Explore", "my explorer"))
	cat, _, errs := Load(t.Context(), tr.config())
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	var names []string
	for _, d := range cat.List() {
		names = append(names, d.Name+"@"+d.Source.Level.String())
	}
	want := []string{"Explore@project", "general-purpose@built-in", "Plan@built-in"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	var overridden []string
	for _, e := range cat.All() {
		if !e.Active {
			overridden = append(overridden, e.Definition.Name+" by "+e.OverriddenBy.String())
		}
	}
	wantOver := []string{"Explore by project " + filepath.Join(tr.place("project-cohort"), "explore.md")}
	if diff := cmp.Diff(wantOver, overridden); diff != "" {
		t.Errorf("overridden (-want +got):\n%s", diff)
	}
}

func TestLoadBuiltInsFollowFlags(t *testing.T) {
	tests := []struct {
		cli  []string
		want []string
	}{
		{nil, []string{"Explore", "general-purpose", "Plan"}},
		{[]string{"builtin_explore_plan_agents=off"}, []string{"general-purpose"}},
		{[]string{"verification_agent=on"}, []string{"Explore", "general-purpose", "Plan", "verification"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.cli, ","), func(t *testing.T) {
			fs, err := flags.Resolve(flags.Config{CLI: tt.cli})
			if err != nil {
				t.Fatal(err)
			}
			cat, _, errs := Load(t.Context(), LoadConfig{Flags: fs})
			if len(errs) != 0 {
				t.Fatal(errs)
			}
			var names []string
			for _, d := range cat.List() {
				names = append(names, d.Name)
				if !d.BuiltIn || d.Source.Level != LevelBuiltIn {
					t.Errorf("%s is not marked built-in", d.Name)
				}
			}
			if diff := cmp.Diff(tt.want, names); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadMalformedFileDoesNotStopOthers(t *testing.T) {
	tr := newTree(t)
	dir := tr.place("project-cohort")
	writeFile(t, filepath.Join(dir, "a-good.md"), agentFile("good", "fine"))
	writeFile(t, filepath.Join(dir, "b-bad.md"), "---\nname: bad\ndescription: d\nmaxTurns: lots\n---\nx")
	writeFile(t, filepath.Join(dir, "c-broken.md"), "---\nname: broken\n  description: [\n---\n")
	writeFile(t, filepath.Join(dir, "nested", "deeper", "d-good.md"), agentFile("deep", "nested"))
	writeFile(t, filepath.Join(dir, "notes.txt"), "not an agent")
	writeFile(t, filepath.Join(dir, ".hidden.md"), "garbage")
	writeFile(t, filepath.Join(dir, ".git", "x.md"), "garbage")
	writeFile(t, filepath.Join(tr.place("user-cohort"), "user.md"), agentFile("mine", "user level"))

	cat, _, errs := Load(t.Context(), tr.config())
	var got []string
	for _, e := range errs {
		var pe *ParseError
		if !errors.As(e, &pe) {
			t.Fatalf("error %v is not a *ParseError", e)
		}
		got = append(got, fmt.Sprintf("%s:%d", filepath.Base(pe.Path), pe.Line))
	}
	if diff := cmp.Diff([]string{"b-bad.md:4", "c-broken.md:3"}, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s\n%v", diff, errs)
	}
	for _, name := range []string{"good", "deep", "mine", "general-purpose"} {
		if _, ok := cat.Get(name); !ok {
			t.Errorf("%s did not load", name)
		}
	}
	if d, _ := cat.Get("deep"); d != nil && d.Source.Path != filepath.Join(dir, "nested", "deeper", "d-good.md") {
		t.Errorf("deep has source path %q", d.Source.Path)
	}
}

func TestLoadUnknownToolsWarn(t *testing.T) {
	tr := newTree(t)
	path := filepath.Join(tr.place("project-cohort"), "x.md")
	writeFile(t, path, "---\nname: x\ndescription: d\ntools: Read, Teleport, WebSearch\n---\nb")
	cat, warns, errs := Load(t.Context(), tr.config())
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	want := []string{
		path + `:4: tools: unknown tool "Teleport" ignored`,
		path + ":4: tools: WebSearch needs a provider with server-side web search (the Anthropic API), which this session lacks; ignored",
	}
	var got []string
	for _, w := range warns {
		got = append(got, w.String())
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	d, _ := cat.Get("x")
	if diff := cmp.Diff([]string{"Read"}, d.Tools); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

func TestLoadDuplicateNameInOneDirectory(t *testing.T) {
	tr := newTree(t)
	dir := tr.place("user-cohort")
	writeFile(t, filepath.Join(dir, "a.md"), agentFile("x", "first"))
	writeFile(t, filepath.Join(dir, "b", "a.md"), agentFile("x", "second"))
	cat, warns, errs := Load(t.Context(), tr.config())
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	if d, _ := cat.Get("x"); d.Description != "first" {
		t.Errorf("winner %q, want the first in path order", d.Description)
	}
	if len(warns) != 1 || !strings.Contains(warns[0].String(), "also defined in "+filepath.Join(dir, "a.md")) {
		t.Errorf("warnings %v", warns)
	}
}

func TestLoadProjectRoot(t *testing.T) {
	tr := newTree(t)
	writeFile(t, filepath.Join(tr.project, ".cohort", "agents", "root.md"), agentFile("atroot", "root"))
	// An agents dir below the root is not a project dir.
	writeFile(t, filepath.Join(tr.project, "sub", ".cohort", "agents", "sub.md"), agentFile("atsub", "sub"))
	tests := []struct {
		name string
		cfg  LoadConfig
		want []string
	}{
		{"git root of cwd", LoadConfig{Cwd: filepath.Join(tr.project, "sub", "dir")}, []string{"atroot"}},
		{"explicit root", LoadConfig{Cwd: tr.project, ProjectRoot: filepath.Join(tr.project, "sub")}, []string{"atsub"}},
		{"cwd outside git", LoadConfig{Cwd: filepath.Join(tr.home)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cat, _, errs := Load(t.Context(), tt.cfg)
			if len(errs) != 0 {
				t.Fatal(errs)
			}
			var got []string
			for _, d := range cat.List() {
				if !d.BuiltIn {
					got = append(got, d.Name)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if got := ProjectRoot(filepath.Join(tr.home, "x")); got != filepath.Join(tr.home, "x") {
		t.Errorf("ProjectRoot outside git = %q", got)
	}
}

func TestLoadHomeAsProjectReadsOnce(t *testing.T) {
	tr := newTree(t)
	writeFile(t, filepath.Join(tr.place("user-claude"), "x.md"), agentFile("x", "d"))
	cfg := tr.config()
	cfg.ProjectRoot = tr.home
	cat, warns, errs := Load(t.Context(), cfg)
	if len(errs) != 0 || len(warns) != 0 {
		t.Fatalf("errors %v, warnings %v", errs, warns)
	}
	n := 0
	for _, e := range cat.All() {
		if e.Definition.Name == "x" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("x loaded %d times", n)
	}
}

func TestLoadSymlinks(t *testing.T) {
	tr := newTree(t)
	elsewhere := filepath.Join(t.TempDir(), "dotfiles")
	writeFile(t, filepath.Join(elsewhere, "linked.md"), agentFile("linked", "via a linked dir"))
	writeFile(t, filepath.Join(elsewhere, "file.md"), agentFile("linkedfile", "via a linked file"))
	// The agents dir itself is a link; a link to a file inside is followed; a
	// link to a directory inside is not (cycles).
	if err := os.MkdirAll(filepath.Join(tr.home, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	must(t, os.Symlink(elsewhere, tr.place("user-claude")))
	dir := tr.place("project-cohort")
	writeFile(t, filepath.Join(dir, "plain.md"), agentFile("plain", "d"))
	must(t, os.Symlink(filepath.Join(elsewhere, "file.md"), filepath.Join(dir, "f.md")))
	must(t, os.Symlink(dir, filepath.Join(dir, "loop")))
	cat, _, errs := Load(t.Context(), tr.config())
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	for _, name := range []string{"linked", "linkedfile", "plain"} {
		if _, ok := cat.Get(name); !ok {
			t.Errorf("%s did not load", name)
		}
	}
	if d, _ := cat.Get("linked"); d != nil && d.Source.Path != filepath.Join(tr.place("user-claude"), "linked.md") {
		t.Errorf("linked shows path %q, want it under the configured directory", d.Source.Path)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestLoadUnreadableDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads everything")
	}
	tr := newTree(t)
	dir := tr.place("project-cohort")
	writeFile(t, filepath.Join(dir, "locked", "x.md"), agentFile("x", "d"))
	writeFile(t, filepath.Join(dir, "ok.md"), agentFile("ok", "d"))
	must(t, os.Chmod(filepath.Join(dir, "locked"), 0))
	t.Cleanup(func() { os.Chmod(filepath.Join(dir, "locked"), 0o755) })
	cat, _, errs := Load(t.Context(), tr.config())
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "locked") {
		t.Errorf("errors %v", errs)
	}
	if _, ok := cat.Get("ok"); !ok {
		t.Error("ok did not load")
	}
}

func TestLoadCancelled(t *testing.T) {
	tr := newTree(t)
	writeFile(t, filepath.Join(tr.place("project-cohort"), "x.md"), agentFile("x", "d"))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	cat, _, errs := Load(ctx, tr.config())
	if len(errs) == 0 || !errors.Is(errs[0], context.Canceled) {
		t.Errorf("errors %v", errs)
	}
	if _, ok := cat.Get("general-purpose"); !ok {
		t.Error("a cancelled load lost the built-ins")
	}
}

func flagsOn(t *testing.T, cli ...string) *flags.Set {
	t.Helper()
	fs, err := flags.Resolve(flags.Config{CLI: cli})
	if err != nil {
		t.Fatal(err)
	}
	return fs
}
