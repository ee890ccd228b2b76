package rewind

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// dump is every file under dir but .git and .cohort: path, mode and a
// hash of the bytes (a link's target), one line each.
func dump(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() && (d.Name() == ".git" || rel == ".cohort") {
			return filepath.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil || rel == "." {
			return err
		}
		body := ""
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			body, _ = os.Readlink(p)
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			body = fmt.Sprintf("%x", sha256.Sum256(data))
		}
		lines = append(lines, fmt.Sprintf("%s %s %s", rel, fi.Mode(), body))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// userGit is the user's git state a rewind must leave alone: the index's
// bytes, HEAD, the stash and every ref but the worktree branches Cohort
// makes (refs/heads/cohort/...).
func userGit(t *testing.T, h *clitest.Harness) string {
	t.Helper()
	index, err := os.ReadFile(filepath.Join(h.Dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	var refs []string
	for _, l := range strings.Split(h.Git("for-each-ref"), "\n") {
		if !strings.Contains(l, "refs/heads/cohort/") {
			refs = append(refs, l)
		}
	}
	return fmt.Sprintf("index %x\nHEAD %s\nstash %s\nrefs\n%s", sha256.Sum256(index), h.Git("symbolic-ref", "HEAD"),
		h.Git("stash", "list"), strings.Join(refs, "\n"))
}

// teamTurn scripts the lead's fan-out: three editors in the checkout
// (Write, Edit, and Bash's sed -i, rm and chmod) and one in a worktree.
func teamTurn(rt *clitest.Router) {
	agent := func(marker string, isolated bool) fakeapi.Block {
		in := map[string]any{"description": "editor " + marker, "prompt": marker + ": edit"}
		if isolated {
			in["isolation"] = "worktree"
		}
		return clitest.Use("Agent", in)
	}
	rt.On("LEAD-rw:", func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			return fakeapi.Reply{Content: []fakeapi.Block{agent("ED-1", false), agent("ED-2", false), agent("ED-3", false), agent("WT-1", true)}}
		}
		return fakeapi.TextReply("the team is done")
	})
	// step answers an agent's turns with calls, then its last result.
	step := func(marker string, calls ...func(cwd string) fakeapi.Block) {
		rt.On(marker+":", func(r *fakeapi.Request) fakeapi.Reply {
			if n := r.Turn(); n < len(calls) {
				return fakeapi.Reply{Content: []fakeapi.Block{calls[n](clitest.AgentCwd(r))}}
			}
			return fakeapi.TextReply(marker + " done: " + r.LastToolResultText())
		})
	}
	read := func(name string) func(string) fakeapi.Block {
		return func(cwd string) fakeapi.Block {
			return clitest.Use("Read", map[string]any{"file_path": filepath.Join(cwd, name)})
		}
	}
	step("ED-1", read("a.txt"), func(cwd string) fakeapi.Block {
		return clitest.Use("Write", map[string]any{"file_path": filepath.Join(cwd, "a.txt"), "content": "rewritten by ED-1\n"})
	})
	step("ED-2", read("b.txt"), func(cwd string) fakeapi.Block {
		return clitest.Use("Edit", map[string]any{"file_path": filepath.Join(cwd, "b.txt"), "old_string": "beta", "new_string": "BETA by ED-2"})
	})
	step("ED-3", func(cwd string) fakeapi.Block {
		return clitest.Use("Bash", map[string]any{"command": "sed -i 's/gamma/GAMMA/' c.txt && rm d.txt notes/todo.md && chmod -x run.sh && echo made > new.txt"})
	})
	step("WT-1", func(cwd string) fakeapi.Block {
		return clitest.Use("Bash", map[string]any{"command": "sed -i 's/alpha/WORKTREE/' a.txt && rm b.txt && echo x > wt-new.txt"})
	})
}

// prepared makes the project: committed files (one executable), an
// untracked file, a staged change and a stash entry of the user's.
func prepared(t *testing.T, rt *clitest.Router) *clitest.Harness {
	h := clitest.New(t, rt.Policy)
	clitest.GitRepo(t, h, map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n", "c.txt": "gamma\n", "d.txt": "delta\n",
		"e.txt": "epsilon\n", "run.sh": "#!/bin/sh\necho run\n"})
	if err := os.Chmod(filepath.Join(h.Dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	h.Git("commit", "-q", "-am", "executable")
	h.Write("b.txt", "beta, the user's stashed idea\n")
	h.Git("stash", "push", "-q", "-m", "the user's", "--", "b.txt")
	h.Write("e.txt", "epsilon staged\n")
	h.Git("add", "e.txt")
	h.Write("notes/todo.md", "the user's untracked notes\n")
	return h
}

// TestRewindUndoesATeamsTurn is issue 41's end-to-end test: a fan-out of
// three agents editing the checkout and one in a worktree; `cohort rewind
// 1` restores the tree before the turn byte for byte, modes included,
// removes the worktree's changes, and leaves the user's branches, index
// and stash as they were.
func TestRewindUndoesATeamsTurn(t *testing.T) {
	t.Parallel()
	rt := &clitest.Router{}
	teamTurn(rt)
	h := prepared(t, rt)
	before, gitBefore := dump(t, h.Dir), userGit(t, h)

	out, errOut, code := h.Run("-p", "LEAD-rw: fan out", "--permission-mode", "bypassPermissions")
	if code != 0 || !strings.Contains(out, "the team is done") {
		t.Fatalf("turn: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if got := h.Read("c.txt"); got != "GAMMA\n" {
		t.Fatalf("the turn's sed did not run: c.txt = %q", got)
	}
	wts, _ := filepath.Glob(filepath.Join(h.Dir, ".cohort", "worktrees", "*"))
	if len(wts) != 1 {
		t.Fatalf("worktrees after the turn: %v, want the isolated agent's", wts)
	}
	wt := wts[0]
	if st := h.Git("-C", wt, "status", "--porcelain"); st == "" {
		t.Fatal("the worktree agent changed nothing")
	}

	dry, errOut, code := h.Run("rewind", "1", "--dry-run")
	if code != 0 {
		t.Fatalf("dry run: exit %d\n%s\n%s", code, dry, errOut)
	}
	for _, want := range []string{"would restore " + filepath.Join(h.Dir, "a.txt"), "would delete  " + filepath.Join(h.Dir, "new.txt"),
		"would restore " + filepath.Join(wt, "b.txt"), "would delete  " + filepath.Join(wt, "wt-new.txt")} {
		if !strings.Contains(dry, want) {
			t.Errorf("dry run lacks %q:\n%s", want, dry)
		}
	}
	if got := h.Read("c.txt"); got != "GAMMA\n" {
		t.Fatal("the dry run changed a file")
	}

	res, errOut, code := h.Run("rewind", "1")
	if code != 0 {
		t.Fatalf("rewind: exit %d\n%s\n%s", code, res, errOut)
	}
	if d := cmp.Diff(before, dump(t, h.Dir)); d != "" {
		t.Errorf("the tree after the rewind (-before the turn +after the rewind):\n%s", d)
	}
	if d := cmp.Diff(gitBefore, userGit(t, h)); d != "" {
		t.Errorf("the user's git state changed (-before +after):\n%s", d)
	}
	if st := h.Git("-C", wt, "status", "--porcelain"); st != "" {
		t.Errorf("the worktree keeps changes after the rewind:\n%s", st)
	}
}

// TestRewindAsksBeforeOverwritingTheUsersEdit: a file the user changed
// after the turn is named and not overwritten without --force.
func TestRewindAsksBeforeOverwritingTheUsersEdit(t *testing.T) {
	t.Parallel()
	rt := &clitest.Router{}
	rt.On("LEAD-one:", func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Bash", map[string]any{"command": "echo the lead > a.txt"})}}
		}
		return fakeapi.TextReply("written")
	})
	h := prepared(t, rt)
	if out, errOut, code := h.Run("-p", "LEAD-one: write", "--permission-mode", "bypassPermissions"); code != 0 {
		t.Fatalf("turn: exit %d\n%s\n%s", code, out, errOut)
	}
	h.Write("a.txt", "the user's own words\n")
	out, errOut, code := h.Run("rewind", "1")
	if code == 0 || !strings.Contains(errOut, filepath.Join(h.Dir, "a.txt")) || !strings.Contains(out, "changed by you after the checkpoint") {
		t.Fatalf("rewind over a user's edit: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if got := h.Read("a.txt"); got != "the user's own words\n" {
		t.Fatalf("the user's edit was overwritten: %q", got)
	}
	if out, errOut, code := h.Run("rewind", "1", "--force"); code != 0 {
		t.Fatalf("--force: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := h.Read("a.txt"); got != "alpha\n" {
		t.Fatalf("after --force a.txt = %q, want the checkpoint's", got)
	}
}

// TestRewindWithoutCheckpoints: a project with no session says so.
func TestRewindWithoutCheckpoints(t *testing.T) {
	t.Parallel()
	h := clitest.New(t, (&clitest.Router{}).Policy)
	out, errOut, code := h.Run("rewind", "1")
	if code != 1 || !strings.Contains(errOut, "no checkpoints") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if out, errOut, code := h.Run("checkpoints", "prune"); code != 0 || out != "removed 0 checkpoint(s)\n" {
		t.Fatalf("prune: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
}
