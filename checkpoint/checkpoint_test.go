package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/internal/gitrepo"
)

// agentsEdit does what a turn's agents might: write, edit, sed -i, rm,
// chmod, a new untracked file, a file over the size limit, a symlink
// retargeted.
func agentsEdit(t *testing.T, dir string) {
	t.Helper()
	write(t, dir, "new.go", "package x\n", 0o644)
	write(t, dir, "sub/b.txt", "beta edited\n", 0o644)
	if err := os.Remove(filepath.Join(dir, "notes/untracked.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "a.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o644); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "big.bin", strings.Repeat("x", 4<<10), 0o644)
	os.Remove(filepath.Join(dir, "link"))
	if err := os.Symlink("run.sh", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "more.log", "ignored and made by an agent\n", 0o644)
}

func TestRewindRestoresTheTreeByteForByte(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir, repo := newRepo(t)
	s := newStore(t)
	root := Root{Dir: dir, Repo: repo}
	want := dump(t, dir)
	before := gitState(t, dir)
	snap(t, s, 1, Before, root)
	agentsEdit(t, dir)
	snap(t, s, 1, After, root)

	p, err := s.Plan(ctx, Request{Session: "sess-1", Project: "proj", Turn: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Problems) > 0 {
		t.Errorf("problems: %q", p.Problems)
	}
	rp := p.Roots[0]
	if diff := cmp.Diff([]string{"a.txt", "link", "notes/untracked.md", "run.sh", "sub/b.txt"}, rp.Write); diff != "" {
		t.Errorf("write (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"new.go", "big.bin"}, rp.Delete); diff != "" {
		t.Errorf("delete (-want +got):\n%s", diff)
	}
	if len(rp.UserEdited) > 0 || rp.Index || rp.Branch != nil {
		t.Errorf("user edits %q, index %v, branch %v: want none", rp.UserEdited, rp.Index, rp.Branch)
	}
	if _, err := s.Apply(ctx, p, Options{}); err != nil {
		t.Fatal(err)
	}
	// more.log is ignored: never recorded, never touched.
	os.Remove(filepath.Join(dir, "more.log"))
	if diff := cmp.Diff(want, dump(t, dir)); diff != "" {
		t.Errorf("tree after rewind (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, gitState(t, dir)); diff != "" {
		t.Errorf("the user's refs, index or stash changed (-want +got):\n%s", diff)
	}
}

// TestWritersMayGoOnceCaptured: SnapshotThen says the files are captured
// before the checkpoint is recorded, and edits made from then on (a
// session's writers, released at that point) are not in the checkpoint: a
// rewind to it restores the files as they were.
func TestWritersMayGoOnceCaptured(t *testing.T) {
	t.Parallel()
	dir, repo := newRepo(t)
	s := newStore(t)
	root := Root{Dir: dir, Repo: repo}
	want := dump(t, dir)
	called := false
	_, err := s.SnapshotThen(t.Context(), "sess-1", "proj", Record{Turn: 1, Phase: Before}, []Root{root}, func() {
		called = true
		if recs, _ := s.Records("sess-1"); len(recs) != 0 {
			t.Errorf("the checkpoint was recorded before its files were said to be captured: %+v", recs)
		}
		agentsEdit(t, dir)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !called {
		t.Fatal("captured was never called")
	}
	if recs, err := s.Records("sess-1"); err != nil || len(recs) != 1 {
		t.Fatalf("records after the snapshot: %+v, %v; want one", recs, err)
	}
	snap(t, s, 1, After, root)
	rewindTurn1(t, s)
	os.Remove(filepath.Join(dir, "more.log")) // ignored: never recorded
	if diff := cmp.Diff(want, dump(t, dir)); diff != "" {
		t.Errorf("the checkpoint holds an edit made after its capture (-want +got):\n%s", diff)
	}
}

func TestUserEditIsNotOverwrittenWithoutForce(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir, repo := newRepo(t)
	s := newStore(t)
	root := Root{Dir: dir, Repo: repo}
	snap(t, s, 1, Before, root)
	write(t, dir, "sub/b.txt", "agent\n", 0o644)
	snap(t, s, 1, After, root)
	write(t, dir, "sub/b.txt", "the user's own words\n", 0o644) // between turns
	write(t, dir, "a.txt", "the user again\n", 0o644)

	p, err := s.Plan(ctx, Request{Session: "sess-1", Turn: 1})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a.txt", "sub/b.txt"}, p.Roots[0].UserEdited); diff != "" {
		t.Errorf("user edits (-want +got):\n%s", diff)
	}
	_, err = s.Apply(ctx, p, Options{})
	if !errors.Is(err, ErrNeedsForce) || !strings.Contains(err.Error(), filepath.Join(dir, "sub/b.txt")) {
		t.Fatalf("Apply without force: %v, want ErrNeedsForce naming sub/b.txt", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "sub/b.txt")); string(got) != "the user's own words\n" {
		t.Fatalf("the user's edit was overwritten: %q", got)
	}
	if _, err := s.Apply(ctx, p, Options{Force: true}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "sub/b.txt")); string(got) != "beta\n" {
		t.Fatalf("with force: %q, want the checkpoint's", got)
	}
}

func TestForgedRefIsRefused(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir, repo := newRepo(t)
	s := newStore(t)
	root := Root{Dir: dir, Repo: repo}
	first := snap(t, s, 1, Before, root)
	write(t, dir, "a.txt", "changed\n", 0o644)
	other := snap(t, s, 2, Before, root)
	// Someone points turn 1's ref at turn 2's commit.
	git(t, s.Dir(), "--git-dir=store.git", "update-ref", first.Ref("sess-1"), other.Commit)
	_, err := s.Plan(ctx, Request{Session: "sess-1", Turn: 1})
	if !errors.Is(err, ErrForged) || !strings.Contains(err.Error(), other.Commit) || !strings.Contains(err.Error(), first.Commit) {
		t.Fatalf("Plan = %v, want ErrForged naming what was found (%s) and recorded (%s)", err, other.Commit, first.Commit)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(got) != "changed\n" {
		t.Fatal("a refused checkpoint changed a file")
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	t.Run("no checkpoints", func(t *testing.T) {
		s := newStore(t)
		_, err := s.Plan(ctx, Request{Session: "never", Turn: 1})
		if !errors.Is(err, ErrNoCheckpoints) {
			t.Fatalf("Plan = %v, want ErrNoCheckpoints", err)
		}
	})
	t.Run("deleted ref", func(t *testing.T) {
		dir, repo := newRepo(t)
		s := newStore(t)
		cp := snap(t, s, 1, Before, Root{Dir: dir, Repo: repo})
		snap(t, s, 2, Before, Root{Dir: dir, Repo: repo})
		git(t, s.Dir(), "--git-dir=store.git", "update-ref", "-d", cp.Ref("sess-1"))
		_, err := s.Plan(ctx, Request{Session: "sess-1", Turn: 1})
		if err == nil || !strings.Contains(err.Error(), "missing") || !strings.Contains(err.Error(), cp.Ref("sess-1")) ||
			!strings.Contains(err.Error(), "still intact are before turns 2 ") {
			t.Fatalf("Plan = %v, want the missing ref named, and turn 2 as what can still be restored", err)
		}
	})
	t.Run("no such turn", func(t *testing.T) {
		dir, repo := newRepo(t)
		s := newStore(t)
		snap(t, s, 1, Before, Root{Dir: dir, Repo: repo})
		_, err := s.Plan(ctx, Request{Session: "sess-1", Turn: 7})
		if err == nil || !strings.Contains(err.Error(), "before turns 1") {
			t.Fatalf("Plan = %v, want the turns it has", err)
		}
	})
	t.Run("corrupt object", func(t *testing.T) {
		dir, repo := newRepo(t)
		s := newStore(t)
		root := Root{Dir: dir, Repo: repo}
		snap(t, s, 1, Before, root)
		write(t, dir, "a.txt", "changed\n", 0o644)
		write(t, dir, "sub/b.txt", "changed too\n", 0o644)
		// The blob a.txt is restored from, corrupted in the repository.
		blob := strings.Fields(git(t, dir, "ls-files", "-s", "a.txt"))[1]
		obj := filepath.Join(dir, ".git", "objects", blob[:2], blob[2:])
		os.Chmod(obj, 0o644)
		if err := os.WriteFile(obj, []byte("not zlib"), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := s.Plan(ctx, Request{Session: "sess-1", Turn: 1})
		if err != nil {
			t.Fatal(err)
		}
		res, err := s.Apply(ctx, p, Options{})
		if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "a.txt") || strings.Contains(err.Error(), "sub/b.txt") {
			t.Fatalf("Apply = %v, want an error naming the root and a.txt alone", err)
		}
		// What is intact is restored all the same.
		if data, _ := os.ReadFile(filepath.Join(dir, "sub/b.txt")); string(data) != "beta\n" || !slices.Contains(res.Restored, filepath.Join(dir, "sub/b.txt")) {
			t.Errorf("sub/b.txt after the rewind: %q, restored %q; want it back as beta", data, res.Restored)
		}
	})
}

func TestPlainFolder(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	write(t, dir, "doc.txt", "one\n", 0o644)
	write(t, dir, "bin/tool", "#!/bin/sh\n", 0o755)
	want := dump(t, dir)
	s := newStore(t)
	root := Root{Dir: dir}
	snap(t, s, 1, Before, root)
	write(t, dir, "doc.txt", "two\n", 0o644)
	os.Remove(filepath.Join(dir, "bin/tool"))
	write(t, dir, "extra/x", "x\n", 0o644)
	p, err := s.Plan(ctx, Request{Session: "sess-1", Turn: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(ctx, p, Options{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, dump(t, dir)); diff != "" {
		t.Errorf("folder after rewind (-want +got):\n%s", diff)
	}
}

func TestProtectedIndexAndBranch(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir, repo := newRepo(t)
	s := newStore(t)
	root := Root{Dir: dir, Repo: repo}
	snap(t, s, 1, Before, root)
	write(t, dir, ".mcp.json", `{"mcpServers":{}}`, 0o644)
	write(t, dir, "c.txt", "agent's\n", 0o644)
	git(t, dir, "add", "c.txt")
	git(t, dir, "commit", "-q", "-m", "an agent's commit")
	snap(t, s, 1, After, root)

	p, err := s.Plan(ctx, Request{Session: "sess-1", Turn: 1})
	if err != nil {
		t.Fatal(err)
	}
	rp := p.Roots[0]
	if !slices.Equal(rp.Protected, []string{".mcp.json"}) || !rp.Index || rp.Branch == nil || len(rp.Branch.Commits) != 1 || !strings.Contains(rp.Branch.Commits[0], "an agent's commit") {
		t.Fatalf("protected %q, index %v, branch %+v", rp.Protected, rp.Index, rp.Branch)
	}
	res, err := s.Apply(ctx, p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".mcp.json")); err != nil {
		t.Errorf(".mcp.json was removed without asking: %v", err)
	}
	if head := strings.TrimSpace(git(t, dir, "log", "-1", "--format=%s")); head != "an agent's commit" {
		t.Errorf("the branch moved without asking: %s", head)
	}
	if len(res.Left) != 2 {
		t.Errorf("left: %q, want .mcp.json and the index", res.Left)
	}
	p, err = s.Plan(ctx, Request{Session: "sess-1", Turn: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(ctx, p, Options{Protected: true, MoveBranch: true, Force: true}); err != nil {
		t.Fatal(err)
	}
	if head := strings.TrimSpace(git(t, dir, "log", "-1", "--format=%s")); head != "first" {
		t.Errorf("branch at %q after MoveBranch, want first", head)
	}
	if st := git(t, dir, "status", "--porcelain"); st != "M  a.txt\n?? notes/\n" {
		t.Errorf("status after the full rewind:\n%s", st)
	}
}

func TestWorktreeMadeSince(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir, repo := newRepo(t)
	s := newStore(t)
	snap(t, s, 1, Before, Root{Dir: dir, Repo: repo})
	wt := filepath.Join(dir, ".cohort", "worktrees", "w1")
	git(t, dir, "worktree", "add", "-q", "-b", "cohort/w1", wt)
	head := strings.TrimSpace(git(t, wt, "rev-parse", "HEAD"))
	want := dump(t, wt)
	write(t, wt, "sub/b.txt", "in the worktree\n", 0o644)
	write(t, wt, "fresh.txt", "new\n", 0o644)
	wl, err := gitrepo.Read(wt)
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Plan(ctx, Request{Session: "sess-1", Turn: 1, Roots: []Root{{Dir: wt, Repo: wl, Base: head}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(ctx, p, Options{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, dump(t, wt)); diff != "" {
		t.Errorf("worktree after rewind (-want +got):\n%s", diff)
	}
}

func TestPruneKeepsTheLastTurns(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir, repo := newRepo(t)
	s := newStore(t)
	root := Root{Dir: dir, Repo: repo}
	for turn := 1; turn <= 3; turn++ {
		snap(t, s, turn, Before, root)
		write(t, dir, "a.txt", fmt.Sprintf("turn %d\n", turn), 0o644)
		snap(t, s, turn, After, root)
	}
	got, err := s.Prune(ctx, "", Retention{KeepTurns: 2, KeepDays: 30}, true)
	if err != nil || got.Checkpoints != 2 {
		t.Fatalf("Prune = %+v, %v; want turn 1's two checkpoints removed", got, err)
	}
	if _, err := s.Plan(ctx, Request{Session: "sess-1", Turn: 1}); err == nil || !strings.Contains(err.Error(), "before turns 2, 3") {
		t.Fatalf("turn 1 after the prune: %v", err)
	}
	p, err := s.Plan(ctx, Request{Session: "sess-1", Turn: 2})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(ctx, p, Options{}); err != nil {
		t.Fatalf("turn 2 after git prune: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(got) != "turn 1\n" {
		t.Fatalf("a.txt = %q, want turn 2's start", got)
	}
	got, err = s.Prune(ctx, "sess-1", Retention{KeepTurns: 100, KeepDays: 0}, false)
	if err != nil || got.Checkpoints != 0 {
		t.Fatalf("a prune that keeps everything: %+v, %v", got, err)
	}
}

// TestCommitObjectsAreGits: the tree and commit Cohort writes itself (of
// two roots, so the entries' order matters) are objects git reads and
// fsck --strict accepts, with the repositories' objects as alternates.
func TestCommitObjectsAreGits(t *testing.T) {
	t.Parallel()
	dir1, repo1 := newRepo(t)
	dir2, repo2 := newRepo(t)
	s := newStore(t)
	cp := snap(t, s, 1, Before, Root{Dir: dir1, Repo: repo1}, Root{Dir: dir2, Repo: repo2})
	alts := filepath.Join(dir1, ".git", "objects") + ":" + filepath.Join(dir2, ".git", "objects")
	run := func(args ...string) string {
		t.Helper()
		c := exec.Command("git", append([]string{"--git-dir", filepath.Join(s.Dir(), "store.git")}, args...)...)
		c.Env = append(os.Environ(), "GIT_ALTERNATE_OBJECT_DIRECTORIES="+alts)
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if got := run("ls-tree", cp.Commit); strings.Count(got, "\n") != 4 || !strings.Contains(got, "tree "+cp.Roots[1].Tree+"\tr1") {
		t.Errorf("the checkpoint's tree:\n%s", got)
	}
	run("fsck", "--strict", "--no-dangling")
}

// TestFolderReplacedByLinkOrFile: an agent turns a folder the checkpoint
// holds into a link to a folder outside, and another into a file. The
// snapshots that follow and the rewind still work (git's index takes a
// file where it had a folder only with --replace), and the rewind writes
// the folders back in place, not through the link.
func TestFolderReplacedByLinkOrFile(t *testing.T) {
	t.Parallel()
	dir, repo := newRepo(t)
	s := newStore(t)
	root := Root{Dir: dir, Repo: repo}
	want := dump(t, dir)
	snap(t, s, 1, Before, root)
	outside := t.TempDir()
	write(t, outside, "theirs.txt", "the user's, outside\n", 0o644)
	wantOutside := dump(t, outside)
	if err := os.RemoveAll(filepath.Join(dir, "sub")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "sub")); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "notes")); err != nil {
		t.Fatal(err)
	}
	write(t, dir, "notes", "a file where a folder was\n", 0o644)
	snap(t, s, 1, After, root)

	rewindTurn1(t, s)
	if diff := cmp.Diff(want, dump(t, dir)); diff != "" {
		t.Errorf("tree after rewind (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantOutside, dump(t, outside)); diff != "" {
		t.Errorf("the folder the link named changed (-want +got):\n%s", diff)
	}
}

// TestSpecialFilesAreNotRecorded: a FIFO a command made, in place of a
// tracked file and beside it, made every later snapshot fail ("unsupported
// file type"; attack5's TestO5Rewind/special-files), so that neither a
// checkpoint nor a rewind could be had. It is recorded as absent: the
// rewind writes the file back and leaves the new FIFO alone.
func TestSpecialFilesAreNotRecorded(t *testing.T) {
	t.Parallel()
	dir, repo := newRepo(t)
	s := newStore(t)
	root := Root{Dir: dir, Repo: repo}
	want := dump(t, dir)
	snap(t, s, 1, Before, root)
	for _, name := range []string{"a.txt", "sub/b.txt"} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"a.txt", "sub/b.txt", "pipe"} {
		if err := syscall.Mkfifo(filepath.Join(dir, name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	snap(t, s, 1, After, root)
	rewindTurn1(t, s)
	if fi, err := os.Lstat(filepath.Join(dir, "pipe")); err != nil || fi.Mode().Type() != fs.ModeNamedPipe {
		t.Errorf("the new FIFO: %v, %v; want it left as it is", fi, err)
	}
	if err := os.Remove(filepath.Join(dir, "pipe")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, dump(t, dir)); diff != "" {
		t.Errorf("tree after rewind (-want +got):\n%s", diff)
	}
}

// TestContentsAreRecordedAsTheyAre: the work tree's .gitattributes, the
// model's to write, change nothing a checkpoint records or restores. A
// working-tree-encoding git cannot apply made every snapshot fail ("BOM
// is required"), and so every rewind (attack9's o9-rewind-gitattributes);
// text=auto turns mixed line endings into others on the way back; an
// ident attribute rewrites $Id$. In a repository and in a plain folder,
// the files come back byte for byte.
func TestContentsAreRecordedAsTheyAre(t *testing.T) {
	t.Parallel()
	for _, plain := range []bool{false, true} {
		dir, repo := newRepo(t)
		root := Root{Dir: dir, Repo: repo}
		if plain {
			dir = t.TempDir()
			root = Root{Dir: dir}
		}
		s := newStore(t)
		write(t, dir, "mixed.txt", "one\r\ntwo\nthree\r\n", 0o644)
		write(t, dir, "id.c", "/* $Id$ */\n", 0o644)
		write(t, dir, "latin.go", "package x // caf\xe9\n", 0o644)
		want := dump(t, dir)
		snap(t, s, 1, Before, root)
		write(t, dir, ".gitattributes", "*.go working-tree-encoding=UTF-16\n* text=auto eol=crlf\n*.c ident\n", 0o644)
		for _, f := range []string{"mixed.txt", "id.c", "latin.go"} {
			write(t, dir, f, "the model's\n", 0o644)
		}
		snap(t, s, 1, After, root)
		rewindTurn1(t, s)
		if diff := cmp.Diff(want, dump(t, dir)); diff != "" {
			t.Errorf("plain=%v: tree after rewind (-want +got):\n%s", plain, diff)
		}
	}
}
