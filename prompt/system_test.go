package prompt

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/llm"
)

var update = flag.Bool("update", false, "rewrite golden files")

var testEnv = Environment{Cwd: "/work/project", IsGitRepo: true, Platform: "linux", OSVersion: "Linux 6.1",
	Date: "2026-11-30", Model: "claude-sonnet-5-5", Tools: []string{"Agent", "Bash", "Read"}}

// render shows system blocks as the model receives them, block by block.
func render(blocks []llm.Block) string {
	var b strings.Builder
	for i, bl := range blocks {
		b.WriteString("=== system block ")
		b.WriteString(string(rune('0' + i)))
		b.WriteString(" ===\n")
		b.WriteString(bl.Text)
		b.WriteString("\n")
	}
	return b.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Fatalf("%s differs (-want +got):\n%s", path, diff)
	}
}

// TestPriorityChainGolden renders the system prompt for each level of the
// priority chain: override > coordinator > agent (appended when proactive,
// else replacing) > --system-prompt > default, then --append-system-prompt.
func TestPriorityChainGolden(t *testing.T) {
	full := Chain{Override: "OVERRIDE PROMPT", Coordinator: "COORDINATOR PROMPT", Agent: "AGENT PROMPT",
		Custom: "CUSTOM PROMPT", Default: "DEFAULT PROMPT", Append: "APPENDED TEXT"}
	cases := []struct {
		name  string
		chain Chain
	}{
		{"chain_override", full},
		{"chain_coordinator", func() Chain { c := full; c.Override = ""; return c }()},
		{"chain_agent", func() Chain { c := full; c.Override, c.Coordinator = "", ""; return c }()},
		{"chain_agent_proactive", func() Chain { c := full; c.Override, c.Coordinator, c.Proactive = "", "", true; return c }()},
		{"chain_custom", Chain{Custom: "CUSTOM PROMPT", Default: "DEFAULT PROMPT", Append: "APPENDED TEXT"}},
		{"chain_default", Chain{Default: "DEFAULT PROMPT", Append: "APPENDED TEXT"}},
		{"chain_builtin_default", Chain{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			golden(t, tc.name, render(System(tc.chain, testEnv, "<git-snapshot>\nbranch main\n</git-snapshot>")))
		})
	}
}

// TestSystemPromptIsDeterministic: the same inputs give the same bytes.
func TestSystemPromptIsDeterministic(t *testing.T) {
	a := render(System(Chain{}, testEnv, "g"))
	for range 10 {
		if b := render(System(Chain{}, testEnv, "g")); a != b {
			t.Fatal("System is not deterministic")
		}
	}
}

func TestMemoryFilesAndUserContext(t *testing.T) {
	root := t.TempDir()
	user := t.TempDir()
	sub := filepath.Join(root, "a", "b")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(user, "COHORT.md"), "user rule")
	write(filepath.Join(root, "CLAUDE.md"), "root rule")
	write(filepath.Join(root, "a", "AGENTS.md"), "a rule")
	write(filepath.Join(sub, "COHORT.md"), "b rule")
	files, err := LoadMemory(MemoryConfig{UserDirs: []string{user}, Root: root, Cwd: sub})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, f.Scope+":"+f.Content)
	}
	if diff := cmp.Diff([]string{"user:user rule", "project:root rule", "project:a rule", "project:b rule"}, got); diff != "" {
		t.Fatalf("memory order (-want +got):\n%s", diff)
	}
	b, ok := UserContext(files, "extra section")
	if !ok || !strings.HasPrefix(b.Text, "<system-reminder>") || !strings.Contains(b.Text, "b rule") || !strings.Contains(b.Text, "extra section") {
		t.Fatalf("user context = %q", b.Text)
	}
	if _, ok := UserContext(nil); ok {
		t.Fatal("no memory and no extras should give no block")
	}
}

// TestLoadMemoryLeavesOutPlantedLinks: memory files a repository commits
// as links to a denied file, out of the project or into /proc are left
// out, each reported by name; the rest still load.
func TestLoadMemoryLeavesOutPlantedLinks(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "secrets"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "secrets", "key"), []byte("SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "CLAUDE.md"), []byte("root rule"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "x.md")
	if err := os.WriteFile(outside, []byte("OUTSIDE"), 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{"AGENTS.md": "secrets/key", "COHORT.md": "/proc/self/environ"}
	sub := filepath.Join(root, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, to := range links {
		if err := os.Symlink(to, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(sub, "CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	denied := func(p string) bool { return strings.HasPrefix(p, filepath.Join(root, "secrets")+"/") }
	files, err := LoadMemory(MemoryConfig{Root: root, Cwd: sub, Denied: denied})
	if len(files) != 1 || files[0].Content != "root rule" {
		t.Errorf("loaded %+v, want only the plain CLAUDE.md", files)
	}
	for _, p := range []string{filepath.Join(root, "AGENTS.md"), filepath.Join(root, "COHORT.md"), filepath.Join(sub, "CLAUDE.md")} {
		if err == nil || !strings.Contains(err.Error(), p+" was not read") {
			t.Errorf("the error does not report %s: %v", p, err)
		}
	}
}
