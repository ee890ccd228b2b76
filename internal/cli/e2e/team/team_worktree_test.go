package team

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestIsolatedTeammate spawns a teammate with isolation "worktree": it
// edits and commits in its own worktree, the main checkout stays untouched,
// a write aimed at the main checkout is refused, and the kept worktree is
// recorded in the team file.
func TestIsolatedTeammate(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var cwd, refusal string
	var h *clitest.Harness
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		first, turn := r.FirstUserText(), r.Turn()
		switch {
		case strings.Contains(first, "iso-job"):
			switch turn {
			case 0:
				mu.Lock()
				cwd = clitest.AgentCwd(r)
				mu.Unlock()
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Bash", map[string]any{
					"command": "echo teammate > shared.txt && " + clitest.CommitCmd("teammate edit")})}}
			case 1:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Write", map[string]any{
					"file_path": filepath.Join(h.Dir, "escape.txt"), "content": "escaped\n"})}}
			case 2:
				mu.Lock()
				refusal = r.LastToolResultText()
				mu.Unlock()
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("SendMessage", map[string]any{"to": "team-lead", "message": "iso: committed"})}}
			}
			return fakeapi.TextReply("iso idle")
		case strings.Contains(first, "lead-start"):
			switch turn {
			case 0:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("TeamCreate", map[string]any{"team_name": "iso"})}}
			case 1:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Agent", map[string]any{"description": "isolated",
					"team_name": "iso", "name": "iso", "prompt": "iso-job: edit in your worktree", "isolation": "worktree"})}}
			}
			return fakeapi.TextReply("noted")
		}
		return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "no rule"}}
	}
	h = clitest.New(t, policy)
	clitest.GitRepo(t, h, map[string]string{"shared.txt": "original\n"})
	out, errOut, code := h.Run("-p", "lead-start: an isolated teammate", "--output-format", "json",
		"--teammate-mode", "in-process", "--permission-mode", "bypassPermissions")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if got := h.Read("shared.txt"); got != "original\n" {
		t.Fatalf("the main checkout changed: %q", got)
	}
	if _, err := os.Stat(filepath.Join(h.Dir, "escape.txt")); !os.IsNotExist(err) {
		t.Fatalf("the teammate wrote into the main checkout (stat: %v)", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(cwd, filepath.Join(".cohort", "worktrees")) {
		t.Fatalf("the teammate's working directory should be its worktree, got %q", cwd)
	}
	if refusal == "" || !strings.Contains(strings.ToLower(refusal), "worktree") {
		t.Fatalf("the write to the main checkout should be refused, got %q", refusal)
	}
	var wt string
	for _, m := range h.TeamConfig("iso")["members"].([]any) {
		mm := m.(map[string]any)
		if mm["name"] == "iso" {
			wt, _ = mm["worktreePath"].(string)
		}
	}
	if wt == "" {
		t.Fatal("the team file does not record the teammate's worktree")
	}
	data, err := os.ReadFile(filepath.Join(wt, "shared.txt"))
	if err != nil || string(data) != "teammate\n" {
		t.Fatalf("the kept worktree should hold the teammate's edit: %q, %v", data, err)
	}
	if log := h.Git("log", "--oneline", "--all"); !strings.Contains(log, "teammate edit") {
		t.Fatalf("the teammate's commit is not on any branch:\n%s", log)
	}
}
