package worktree

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func pathExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

func TestEnterThenKeep(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	env := r.agent("a1f3a9c0d11223344")
	res := r.call(EnterName, env, map[string]any{})
	if res.IsError {
		t.Fatalf("enter: %s", res.TextOf())
	}
	meta := res.Meta.(Entered)
	wantPath := filepath.Join(r.repo.dir, ".cohort", "worktrees", "wt-1f3a9c0d")
	if d := cmp.Diff(Entered{WorktreePath: wantPath, WorktreeBranch: "cohort/wt-1f3a9c0d", Created: true}, meta); d != "" {
		t.Fatalf("entered (-want +got):\n%s", d)
	}
	if env.Cwd != wantPath {
		t.Fatalf("agent cwd = %q, want the worktree", env.Cwd)
	}
	g, ok := env.Guard.(*Guard)
	if !ok || g.Worktree() != wantPath {
		t.Fatalf("agent guard = %#v", env.Guard)
	}
	if err := env.Guard.CheckWrite(filepath.Join(r.repo.dir, "README.md")); !errors.Is(err, ErrOutsideWorktree) {
		t.Errorf("a write to the main checkout was not refused: %v", err)
	}
	if err := env.Guard.CheckWrite(filepath.Join(wantPath, "README.md")); err != nil {
		t.Errorf("a write in the worktree was refused: %v", err)
	}
	if res := r.call(EnterName, env, map[string]any{}); !res.IsError || !strings.Contains(res.TextOf(), "already work in the worktree") {
		t.Errorf("a second EnterWorktree = %q", res.TextOf())
	}

	if err := os.WriteFile(filepath.Join(wantPath, "notes.txt"), []byte("kept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res = r.call(ExitName, env, map[string]any{"action": "keep"})
	if res.IsError {
		t.Fatalf("exit keep: %s", res.TextOf())
	}
	for _, want := range []string{"stays in place on branch cohort/wt-1f3a9c0d", "notes.txt", "Your working directory is " + r.repo.dir + " again."} {
		if !strings.Contains(res.TextOf(), want) {
			t.Errorf("keep result %q lacks %q", res.TextOf(), want)
		}
	}
	if env.Cwd != r.repo.dir || env.Guard != nil {
		t.Errorf("after exit: cwd %q guard %v", env.Cwd, env.Guard)
	}
	if !pathExists(filepath.Join(wantPath, "notes.txt")) || len(r.repo.branches()) != 1 {
		t.Error("the kept worktree or its branch is gone")
	}
	if res := r.call(ExitName, env, map[string]any{"action": "keep"}); !res.IsError || !strings.Contains(res.TextOf(), "not in a worktree") {
		t.Errorf("exit without a worktree = %q", res.TextOf())
	}

	// Entering it again by name finds the kept worktree.
	res = r.call(EnterName, env, map[string]any{"name": "wt-1f3a9c0d"})
	if res.IsError || res.Meta.(Entered).Created || !strings.HasPrefix(res.TextOf(), "Entered the existing worktree") {
		t.Fatalf("re-enter = %q", res.TextOf())
	}
	if res := r.call(ExitName, env, map[string]any{"action": "keep"}); res.IsError {
		t.Fatal(res.TextOf())
	}
}

func TestRemoveNeedsDiscardForChanges(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	env := r.agent("a2")
	res := r.call(EnterName, env, map[string]any{"name": "feature/x"})
	if res.IsError {
		t.Fatal(res.TextOf())
	}
	wt := res.Meta.(Entered).WorktreePath
	if err := os.WriteFile(filepath.Join(wt, "draft.txt"), []byte("draft\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wt, "README.md"), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res = r.call(ExitName, env, map[string]any{"action": "remove"})
	if !res.IsError {
		t.Fatalf("removing a dirty worktree succeeded: %s", res.TextOf())
	}
	for _, want := range []string{"was not removed", "modified files (1):\n  README.md", "untracked files (1):\n  draft.txt", "discard_changes: true", "still in the worktree"} {
		if !strings.Contains(res.TextOf(), want) {
			t.Errorf("refusal %q lacks %q", res.TextOf(), want)
		}
	}
	if env.Cwd != wt || !pathExists(filepath.Join(wt, "draft.txt")) {
		t.Fatal("the refused removal moved the agent or lost files")
	}
	res = r.call(ExitName, env, map[string]any{"action": "remove", "discard_changes": true})
	if res.IsError {
		t.Fatal(res.TextOf())
	}
	if !strings.Contains(res.TextOf(), "and its branch cohort/feature/x, discarding:") || !strings.Contains(res.TextOf(), "draft.txt") {
		t.Errorf("remove result = %q", res.TextOf())
	}
	if pathExists(wt) || len(r.repo.branches()) != 0 || pathExists(filepath.Join(r.repo.dir, ".cohort", "worktrees", "feature")) {
		t.Error("the worktree, its branch or its parent directory is still there")
	}
	if env.Cwd != r.repo.dir || env.Guard != nil {
		t.Errorf("after removal: cwd %q guard %v", env.Cwd, env.Guard)
	}
}

func TestRemoveCleanWorktree(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	env := r.agent("a3")
	// From a subdirectory: the agent lands in the same subdirectory of the
	// worktree.
	env.Cwd = filepath.Join(r.repo.dir, "src")
	res := r.call(EnterName, env, map[string]any{"name": "clean"})
	if res.IsError {
		t.Fatal(res.TextOf())
	}
	wt := res.Meta.(Entered).WorktreePath
	if env.Cwd != filepath.Join(wt, "src") {
		t.Errorf("cwd = %q, want the worktree's src", env.Cwd)
	}
	res = r.call(ExitName, env, map[string]any{"action": "remove"})
	if res.IsError || !strings.HasPrefix(res.TextOf(), "Removed the worktree "+wt+" and its branch cohort/clean.\n") {
		t.Fatalf("remove = %q", res.TextOf())
	}
	if env.Cwd != filepath.Join(r.repo.dir, "src") {
		t.Errorf("cwd after exit = %q", env.Cwd)
	}
}

func TestEnterToolRefusals(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	env := r.agent("a4")
	cases := []struct {
		input map[string]any
		want  string
	}{
		{map[string]any{"name": "x", "path": "/y"}, "either name or path"},
		{map[string]any{"name": "../escape"}, "invalid slug"},
		{map[string]any{"path": "relative/dir"}, "is relative"},
		{map[string]any{"path": r.repo.dir}, "is the main checkout"},
		{map[string]any{"path": filepath.Join(r.repo.dir, "nope")}, "no such worktree"},
	}
	for _, c := range cases {
		res := r.call(EnterName, env, c.input)
		if !res.IsError || !strings.Contains(res.TextOf(), c.want) {
			t.Errorf("%v: %q does not say %q", c.input, res.TextOf(), c.want)
		}
		if env.Guard != nil || env.Cwd != r.repo.dir {
			t.Fatalf("%v moved the agent", c.input)
		}
	}
	r.mgrErr = ErrNotRepository
	if res := r.call(EnterName, env, map[string]any{}); !res.IsError || !strings.Contains(res.TextOf(), "not a git repository") {
		t.Errorf("outside a repository: %q", res.TextOf())
	}
	if b := r.repo.branches(); len(b) != 0 {
		t.Errorf("refused calls left branches %v", b)
	}
}

func TestStartedInAWorktreeCannotExit(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	env := r.agent("a5")
	lease, err := r.ws.Create(t.Context(), "spawned", Owner{SessionID: "s1", AgentID: "a5"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	env.Cwd, env.Guard = lease.Path(), lease.Guard
	if res := r.call(ExitName, env, map[string]any{"action": "remove"}); !res.IsError || !strings.Contains(res.TextOf(), "were started in the worktree") {
		t.Errorf("exit = %q", res.TextOf())
	}
	if res := r.call(EnterName, env, map[string]any{}); !res.IsError {
		t.Errorf("enter = %q", res.TextOf())
	}
	out, err := lease.Finish(t.Context())
	if err != nil || out.Kept || pathExists(lease.Path()) {
		t.Fatalf("finish of a clean worktree = %+v, %v", out, err)
	}
	if out, err := lease.Finish(t.Context()); err != nil || out.Path != lease.Path() {
		t.Errorf("second finish = %+v, %v", out, err)
	}
}

func TestReleaseAndClose(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	a, b := r.agent("a6"), r.agent("a7")
	if res := r.call(EnterName, a, map[string]any{"name": "left-clean"}); res.IsError {
		t.Fatal(res.TextOf())
	}
	if res := r.call(EnterName, b, map[string]any{"name": "left-dirty"}); res.IsError {
		t.Fatal(res.TextOf())
	}
	if err := os.WriteFile(filepath.Join(b.Cwd, "work.txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, ok, err := r.ws.Release(t.Context(), "a6")
	if !ok || err != nil || out.Kept || pathExists(out.Path) {
		t.Fatalf("release of a clean worktree = %+v %v %v", out, ok, err)
	}
	if _, ok, _ := r.ws.Release(t.Context(), "a6"); ok {
		t.Error("released twice")
	}
	if err := r.ws.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !pathExists(filepath.Join(r.repo.dir, ".cohort", "worktrees", "left-dirty", "work.txt")) {
		t.Error("Close removed a worktree with changes")
	}
	if d := cmp.Diff([]string{"cohort/left-dirty"}, r.repo.branches()); d != "" {
		t.Errorf("branches (-want +got):\n%s", d)
	}
}

func TestWorktreeHooks(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	log := filepath.Join(t.TempDir(), "hooks.log")
	r.hooks = hookScope(t, r.repo.dir,
		`cat >> `+log+`; echo >> `+log+`; if grep -q refuse-me `+log+`; then echo "no worktrees named like that" >&2; exit 2; fi`,
		`cat >> `+log+`; echo >> `+log)
	env := r.agent("a8")
	if res := r.call(EnterName, env, map[string]any{"name": "hooked"}); res.IsError {
		t.Fatal(res.TextOf())
	}
	if res := r.call(ExitName, env, map[string]any{"action": "remove"}); res.IsError {
		t.Fatal(res.TextOf())
	}
	res := r.call(EnterName, env, map[string]any{"name": "refuse-me"})
	if !res.IsError || !strings.Contains(res.TextOf(), "a WorktreeCreate hook refused the worktree") || !strings.Contains(res.TextOf(), "no worktrees named like that") {
		t.Fatalf("refused create = %q", res.TextOf())
	}
	if pathExists(filepath.Join(r.repo.dir, ".cohort", "worktrees", "refuse-me")) || len(r.repo.branches()) != 0 {
		t.Error("a refused worktree was made")
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var in struct {
			Event  string `json:"hook_event_name"`
			Path   string `json:"worktree_path"`
			Branch string `json:"branch"`
		}
		if err := json.Unmarshal([]byte(line), &in); err != nil {
			t.Fatalf("hook input %q: %v", line, err)
		}
		events = append(events, in.Event+" "+strings.TrimPrefix(in.Path, r.repo.dir)+" "+in.Branch)
	}
	want := []string{
		"WorktreeCreate /.cohort/worktrees/hooked cohort/hooked",
		"WorktreeRemove /.cohort/worktrees/hooked cohort/hooked",
		"WorktreeCreate /.cohort/worktrees/refuse-me cohort/refuse-me",
	}
	if d := cmp.Diff(want, events); d != "" {
		t.Errorf("hook events (-want +got):\n%s", d)
	}
}

func TestLeaseCwd(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	lease, err := r.ws.Create(t.Context(), "cwd", Owner{SessionID: "s1", AgentID: "a9"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = lease.Finish(r.t.Context()) })
	top := lease.Path()
	for dir, want := range map[string]string{
		"":                                     top,
		r.repo.dir:                             top,
		filepath.Join(r.repo.dir, "src"):       filepath.Join(top, "src"),
		filepath.Join(r.repo.dir, "untracked"): top,
		filepath.Dir(r.repo.dir):               top,
		filepath.Join(top, "src"):              top,
	} {
		if got := lease.Cwd(dir); got != want {
			t.Errorf("Cwd(%q) = %q, want %q", dir, got, want)
		}
	}
}

func TestAgentSlug(t *testing.T) {
	t.Parallel()
	cases := []struct{ id, name, desc, want string }{
		{"a1f3a9c0d11223344", "", "Fix the parser", "fix-the-parser-1f3a9c0d"},
		{"a1f3a9c0d11223344", "reviewer", "ignored", "reviewer-1f3a9c0d"},
		{"a1f3a9c0d11223344", "", "", "agent-1f3a9c0d"},
		{"a1f3a9c0d11223344", "", "日本語 only", "only-1f3a9c0d"},
		{"a1f3a9c0d11223344", "", "../../etc/passwd", "etc-passwd-1f3a9c0d"},
		{"a1f3a9c0d11223344", "", strings.Repeat("word ", 30), "word-word-word-word-word-word-1f3a9c0d"},
		{"a1f3a9c0d11223344", "", "x.lock", "x-lock-1f3a9c0d"},
		{"", "", "", "agent-agent"},
	}
	for _, c := range cases {
		got := AgentSlug(c.id, c.name, c.desc)
		if got != c.want {
			t.Errorf("AgentSlug(%q, %q, %q) = %q, want %q", c.id, c.name, c.desc, got, c.want)
		}
		if err := ValidateSlug(got); err != nil {
			t.Errorf("%q: %v", got, err)
		}
	}
}

func FuzzAgentSlug(f *testing.F) {
	for _, s := range []string{"", "a", "fix it", "../..", "-x-", strings.Repeat("é", 40)} {
		f.Add("a0123456789abcdef", s)
	}
	f.Fuzz(func(t *testing.T, id, desc string) {
		if err := ValidateSlug(AgentSlug(id, "", desc)); err != nil {
			t.Fatal(err)
		}
	})
}
