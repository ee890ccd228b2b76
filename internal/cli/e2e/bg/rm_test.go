package bg

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/bgsession"
	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestRmKeepsWhatWouldBeLost: a --bg -w session runs in its own worktree;
// rm refuses it while it runs, then refuses to lose a commit without
// --discard-unpushed and files without --force-remove-worktree; with both
// the worktree and the record go, and --all no longer lists it.
func TestRmKeepsWhatWouldBeLost(t *testing.T) {
	t.Parallel()
	conv := clitest.NewConv()
	conv.On("lead eps", func(r *fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("cwd " + clitest.AgentCwd(r)) })
	h := newHarness(t, conv.Policy)
	clitest.GitRepo(t, h, map[string]string{"README": "hi\n"})
	id := startBG(t, h, "--worktree=eps", "lead eps: look around")
	r := waitFor(t, h, id, "done", func(r bgsession.Record) bool { return r.State == bgsession.StateDone })
	if r.Worktree == "" || !strings.Contains(r.Worktree, filepath.Join(".cohort", "worktrees", "eps")) {
		t.Fatalf("the session has no worktree of its own: %+v", r)
	}
	if out, _, _ := h.Run("logs", id); !strings.Contains(out, "cwd "+r.Worktree) {
		t.Errorf("the session did not run in its worktree %s:\n%s", r.Worktree, out)
	}
	if _, errOut, code := h.Run("rm", id); code != 1 || !strings.Contains(errOut, "stop it first") {
		t.Fatalf("rm of a running session: exit %d\n%s", code, errOut)
	}
	if _, errOut, code := h.Run("stop", id); code != 0 {
		t.Fatalf("stop: %s", errOut)
	}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", r.Worktree}, args...)...)
		cmd.Env = h.Environ()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	clitest.WriteFile(t, filepath.Join(r.Worktree, "made.txt"), "work\n")
	git("add", "made.txt")
	git("commit", "-q", "-m", "the session's work")
	clitest.WriteFile(t, filepath.Join(r.Worktree, "loose.txt"), "more\n")
	_, errOut, code := h.Run("rm", id)
	if code != 1 || !strings.Contains(errOut, "--discard-unpushed") || !strings.Contains(errOut, "--force-remove-worktree") || !strings.Contains(errOut, "loose.txt") {
		t.Fatalf("rm that would lose a commit and a file: exit %d\n%s", code, errOut)
	}
	if _, errOut, code = h.Run("rm", "--discard-unpushed", id); code != 1 || !strings.Contains(errOut, "--force-remove-worktree") {
		t.Fatalf("rm that would lose a file: exit %d\n%s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(r.Worktree, "made.txt")); err != nil {
		t.Fatalf("a refused rm lost the work: %v", err)
	}
	if out, errOut, code := h.Run("rm", "--discard-unpushed", "--force-remove-worktree", id); code != 0 || !strings.Contains(out, "removed · "+id) {
		t.Fatalf("rm with both flags: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(r.Worktree); !os.IsNotExist(err) {
		t.Fatalf("the worktree is still there: %v", err)
	}
	if _, ok := byID(list(t, h, "--all"), id); ok {
		t.Fatalf("--all still lists a removed session")
	}
}
