package worktree

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/hook"
	"github.com/cohort-dev/cohort/settings"
	"github.com/cohort-dev/cohort/tool"
)

// toolRepo is a git repository with one commit and a hermetic git
// environment (no global or system config, HOME in a temp directory).
type toolRepo struct {
	t   *testing.T
	dir string
	env []string
}

func newToolRepo(t *testing.T) *toolRepo {
	t.Helper()
	home := t.TempDir()
	dir := canonicalPrefix(t.TempDir())
	r := &toolRepo{t: t, dir: dir, env: []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"GIT_CONFIG_GLOBAL=" + os.DevNull, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com",
		"GIT_CEILING_DIRECTORIES=" + filepath.Dir(dir), // never find a repository above
	}}
	r.git("init", "--quiet", "--initial-branch=main")
	r.write("README.md", "# demo\n")
	r.write("src/main.go", "package main\n")
	r.git("add", ".")
	r.git("commit", "--quiet", "-m", "initial commit")
	return r
}

func (r *toolRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.CommandContext(r.t.Context(), "git", args...)
	cmd.Dir = r.dir
	cmd.Env = r.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func (r *toolRepo) write(rel, content string) {
	r.t.Helper()
	p := filepath.Join(r.dir, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

// branches lists the cohort/ branches.
func (r *toolRepo) branches() []string {
	out := r.git("for-each-ref", "--format=%(refname:short)", "refs/heads/cohort/")
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// rig is a Workspaces on a repository, with agents whose workspace the
// fake Move updates as the engine would.
type rig struct {
	t    *testing.T
	repo *toolRepo
	ws   *Workspaces

	mu     sync.Mutex
	envs   map[string]*tool.Env
	hooks  Hooks
	mgrErr error
}

func newRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{t: t, repo: newToolRepo(t), envs: map[string]*tool.Env{}}
	var once sync.Once
	var m *Manager
	var merr error
	r.ws = NewWorkspaces(WorkspacesConfig{
		SessionID: "s1",
		Manager: func(ctx context.Context) (*Manager, error) {
			if r.mgrErr != nil {
				return nil, r.mgrErr
			}
			once.Do(func() { m, merr = New(ctx, Config{Dir: r.repo.dir, Env: r.repo.env}) })
			return m, merr
		},
		Move: func(agentID, cwd string, guard tool.WriteGuard) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			e := r.envs[agentID]
			e.Cwd, e.Guard = cwd, guard
			return nil
		},
		Hooks: func(string) Hooks { return r.hooks },
	})
	return r
}

// agent registers an agent working in the repository's top directory.
func (r *rig) agent(id string) *tool.Env {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := &tool.Env{Caller: tool.Caller{Cwd: r.repo.dir, ID: id}, SessionID: "s1"}
	r.envs[id] = e
	return e
}

// call runs one of the tools with the agent's current environment.
func (r *rig) call(name string, env *tool.Env, input any) tool.Result {
	r.t.Helper()
	raw, err := json.Marshal(input)
	if err != nil {
		r.t.Fatal(err)
	}
	for _, tl := range r.ws.Tools() {
		if tl.Def().Name != name {
			continue
		}
		if err := tool.ValidateInput(tl.Def().InputSchema, raw); err != nil {
			r.t.Fatalf("input %s: %v", raw, err)
		}
		r.mu.Lock()
		cp := *env
		r.mu.Unlock()
		res, err := tl.Run(r.t.Context(), &cp, raw)
		if err != nil {
			r.t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	r.t.Fatalf("no tool %s", name)
	return tool.Result{}
}

// hookScope returns a real hook scope whose settings run the given
// commands for WorktreeCreate and WorktreeRemove.
func hookScope(t *testing.T, dir string, create, remove string) *hook.Scope {
	t.Helper()
	cfg := map[string]any{"hooks": map[string]any{
		"WorktreeCreate": []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": create}}}},
		"WorktreeRemove": []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": remove}}}},
	}}
	data, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := &settings.Settings{}
	s.Add(settings.ScopeProject, filepath.Join(dir, ".cohort", "settings.json"), dir, data)
	set, probs := hook.FromSettings(s)
	if len(probs) > 0 {
		t.Fatalf("hook settings: %v", probs)
	}
	return hook.NewRunner(hook.Config{Hooks: set}).For(hook.Subject{Caller: tool.Caller{Cwd: dir, ID: "a1", Type: "general-purpose", Depth: 1}, SessionID: "s1"})
}
