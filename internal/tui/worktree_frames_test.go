package tui

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// git runs real git in dir for a test.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestIsolatedAgentLeavesStatusClean (issue 43 item 10): after an agent
// that worked in its own worktree (kept, with a change) and whose command
// the user always allowed (a rule in .cohort/settings.local.json), the
// user's checkout shows nothing new in git status — real git.
func TestIsolatedAgentLeavesStatusClean(t *testing.T) {
	w := newWorld(t, worldConfig{}, func(r *fakeapi.Request) fakeapi.Reply {
		switch {
		case strings.Contains(r.FirstUserText(), "SUB-ISO") && r.Turn() == 0:
			return fakeapi.Reply{Content: []fakeapi.Block{use("Bash", map[string]any{"command": "touch notes.txt", "description": "write notes"})}}
		case strings.Contains(r.FirstUserText(), "SUB-ISO"):
			return fakeapi.TextReply("Wrote the notes in my worktree.")
		case r.Turn() == 0:
			return fakeapi.Reply{Content: []fakeapi.Block{use("Agent", map[string]any{"description": "isolated notes",
				"prompt": "SUB-ISO write notes", "subagent_type": "general-purpose", "isolation": "worktree"})}}
		}
		return fakeapi.TextReply("The isolated agent is done.")
	})
	git(t, w.dir, "init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(w.dir, "README"), []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, w.dir, "add", "README")
	git(t, w.dir, "commit", "-q", "-m", "first")
	before := git(t, w.dir, "status", "--porcelain", "--untracked-files=all")
	w.waitFor("default mode")
	w.typeText("write notes in isolation")
	w.key("enter")
	// The isolated agent's command asks; "always allow" saves the rule to
	// the project's .cohort/settings.local.json.
	w.waitFor("Permission", "touch notes.txt")
	w.key("2")
	scr := w.waitFor("The isolated agent is done.", "done in")
	w.golden("worktree-status", hideIDs(hideRoot(scr)))
	if after := git(t, w.dir, "status", "--porcelain", "--untracked-files=all"); after != before {
		t.Errorf("git status in the user's checkout changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	waitFile(t, filepath.Join(w.dir, ".cohort", "settings.local.json"))
	if out := git(t, w.dir, "worktree", "list"); !strings.Contains(out, "cohort/") {
		t.Errorf("the agent's worktree was not kept with its change:\n%s", out)
	}
}

// TestWorktreeEditPromptSaysWhere: a worktree agent's Write prompt names
// the file inside the worktree (.cohort/worktrees/…/notes.txt), not a bare
// notes.txt that reads like the user's own checkout. (Through the relay,
// the isolated agent's Edit prompt said only "Edit(match.go)" while the
// user had asked for the checkout to stay untouched.)
func TestWorktreeEditPromptSaysWhere(t *testing.T) {
	cwd := regexp.MustCompile(`Working directory: (\S+)`)
	w := newWorld(t, worldConfig{}, func(r *fakeapi.Request) fakeapi.Reply {
		switch {
		case strings.Contains(r.FirstUserText(), "SUB-ISO") && r.Turn() == 0:
			dir := cwd.FindStringSubmatch(r.SystemText())[1]
			return fakeapi.Reply{Content: []fakeapi.Block{use("Write", map[string]any{"file_path": filepath.Join(dir, "notes.txt"), "content": "notes\n"})}}
		case strings.Contains(r.FirstUserText(), "SUB-ISO"):
			return fakeapi.TextReply("Wrote the notes in my worktree.")
		case r.Turn() == 0:
			return fakeapi.Reply{Content: []fakeapi.Block{use("Agent", map[string]any{"description": "isolated notes",
				"prompt": "SUB-ISO write notes", "subagent_type": "general-purpose", "isolation": "worktree"})}}
		}
		return fakeapi.TextReply("The isolated agent is done.")
	})
	git(t, w.dir, "init", "-q", "-b", "main")
	git(t, w.dir, "commit", "-q", "--allow-empty", "-m", "first")
	w.waitFor("default mode")
	w.typeText("write notes in isolation")
	w.key("enter")
	w.waitFor("Permission", "Write(.cohort/worktrees/", "/notes.txt)", "Create .cohort/worktrees/")
	w.key("1")
	w.waitFor("The isolated agent is done.", "done in")
}
