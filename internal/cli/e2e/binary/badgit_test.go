package binary

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// Bad input: a repository whose .git holds a commondir file (as a command
// of an earlier session might have planted, pointing at a git dir whose
// config runs a program) is reported at start with the file and what to
// do, and Cohort's own git (the session's snapshot) is not redirected by
// it: the program never runs, inside the sandbox or out.
func TestPlantedCommondirReported(t *testing.T) {
	t.Parallel()
	h := clitest.New(t, clitest.NewConv().On("hello", clitest.Text("hi")).Policy)
	clitest.GitRepo(t, h, map[string]string{"README.md": "hello\n"})
	canary := filepath.Join(filepath.Dir(h.Dir), "fsmonitor-ran")
	fake := filepath.Join(filepath.Dir(h.Dir), "fake")
	for _, d := range []string{"objects", "refs"} {
		if err := os.MkdirAll(filepath.Join(fake, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(fake, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	os.WriteFile(filepath.Join(fake, "config"), []byte("[core]\n\trepositoryformatversion = 0\n\tfsmonitor = touch "+canary+"\n"), 0o644)
	os.WriteFile(filepath.Join(h.Dir, ".git", "commondir"), []byte(fake+"\n"), 0o644)
	h.Write("changed.txt", "x\n")
	_, errOut, code := h.Run("-p", "hello")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if !strings.Contains(errOut, filepath.Join(h.Dir, ".git", "commondir")+" exists") || !strings.Contains(errOut, "remove it") {
		t.Errorf("stderr does not report the commondir file and what to do:\n%s", errOut)
	}
	if _, err := os.Stat(canary); err == nil {
		t.Errorf("the planted git dir's fsmonitor ran")
	}
	// The control: git run as the user would, discovering the repository,
	// follows the file and runs it.
	h.GitErr("status")
	if _, err := os.Stat(canary); err != nil {
		t.Errorf("control: plain git status should follow the commondir file and run the fsmonitor")
	}
}

// Bad input: a repository whose .git is a file or a symlink, leads
// outside the project, or leads nowhere. Each is reported at start with
// the .git entry and what to do, and nothing runs unsandboxed because of
// it: the git dir the entry names has a config whose fsmonitor (which a
// plain git status runs) would leave a file outside the project, and
// neither Cohort's own git nor the model's `git status` (run in the
// sandbox, in default mode, as read-only) makes it.
func TestOddGitEntriesReported(t *testing.T) {
	t.Parallel()
	// elsewhere makes a repository's git dir outside the project, whose
	// config runs a program on git status, and returns it.
	elsewhere := func(t *testing.T, h *clitest.Harness, canary string) string {
		dir := filepath.Join(filepath.Dir(h.Dir), "elsewhere.git")
		h.Git("init", "--quiet", "--initial-branch=main", "--separate-git-dir="+dir)
		h.Git("add", ".")
		h.Git("commit", "--quiet", "-m", "start")
		h.Git("config", "core.fsmonitor", "touch "+canary)
		return dir
	}
	cases := []struct {
		name string
		// plant makes the project's .git entry; want are what stderr must
		// say (the .git entry's path is checked for every case).
		plant func(t *testing.T, h *clitest.Harness, canary string)
		want  []string
	}{
		{"file leading outside", func(t *testing.T, h *clitest.Harness, canary string) {
			elsewhere(t, h, canary) // git writes the .git file itself
		}, []string{"elsewhere.git", "outside the project"}},
		{"symlink leading outside", func(t *testing.T, h *clitest.Harness, canary string) {
			dir := elsewhere(t, h, canary)
			mustRemove(t, filepath.Join(h.Dir, ".git"))
			mustSymlink(t, dir, filepath.Join(h.Dir, ".git"))
		}, []string{"is a symlink to", "replace the link"}},
		{"file leading nowhere", func(t *testing.T, h *clitest.Harness, canary string) {
			clitest.GitRepo(t, h, map[string]string{"README.md": "hello\n"})
			mustRemove(t, filepath.Join(h.Dir, ".git"))
			h.Write(".git", "gitdir: "+filepath.Join(filepath.Dir(h.Dir), "gone")+"\n")
		}, []string{"which does not exist", "remove the file"}},
		{"symlink leading nowhere", func(t *testing.T, h *clitest.Harness, canary string) {
			clitest.GitRepo(t, h, map[string]string{"README.md": "hello\n"})
			mustRemove(t, filepath.Join(h.Dir, ".git"))
			mustSymlink(t, filepath.Join(filepath.Dir(h.Dir), "gone"), filepath.Join(h.Dir, ".git"))
		}, []string{"leads nowhere", "replace it"}},
		{"file that is not a git file", func(t *testing.T, h *clitest.Harness, canary string) {
			clitest.GitRepo(t, h, map[string]string{"README.md": "hello\n"})
			mustRemove(t, filepath.Join(h.Dir, ".git"))
			h.Write(".git", "not a git file\n")
		}, []string{"is not a git file", "fix or remove it"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var results []string
			conv := clitest.NewConv().On("look",
				clitest.Calls(clitest.Use("Bash", map[string]any{"command": "git status; git log -1 --format=%s"})),
				func(r *fakeapi.Request) fakeapi.Reply {
					mu.Lock()
					results = append(results, clitest.ToolResults(r)...)
					mu.Unlock()
					return fakeapi.TextReply("done")
				})
			h := clitest.New(t, conv.Policy)
			clitest.HermeticGit(h)
			h.Write("README.md", "hello\n")
			canary := filepath.Join(filepath.Dir(h.Dir), "fsmonitor-ran")
			c.plant(t, h, canary)
			h.Write("changed.txt", "x\n")
			_, errOut, code := h.Run("-p", "look at the repository")
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, errOut)
			}
			for _, w := range append([]string{filepath.Join(h.Dir, ".git")}, c.want...) {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr does not say %q:\n%s", w, errOut)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(results) != 1 {
				t.Errorf("the model's git call did not come back: %q", results)
			}
			if _, err := os.Stat(canary); err == nil {
				t.Errorf("the git dir's fsmonitor ran (tool results %q)", results)
			}
		})
	}
}

// Bad input: a project with no .git, because it never had one or because
// it was deleted while the session ran. The model, in bypassPermissions,
// then makes a .git of its own whose config runs a program on git status
// (core.fsmonitor, which would leave a file outside the project), changes
// a file (a checkpoint) and asks for an isolated agent (which needs a
// repository). Nothing runs that program, inside the sandbox or out, and
// what needs a repository says which and what to do.
func TestMissingGitReported(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// repo: the project starts as a repository, whose .git the user
		// deletes after the model's first turn; want are what stderr or a
		// tool result must say.
		repo bool
		want []string
	}{
		{"never had one", false, []string{"is not inside a git repository, so the agent cannot be isolated", "run it from a repository (git init) or without isolation"}},
		{"deleted mid-session", true, []string{
			// The checkpoint after the turn, and the isolated agent.
			"the repository's git directory, no longer exists (was .git deleted while the session ran?); this turn has no checkpoint",
			"restore the repository and start a new session",
			"no longer exists (was .git deleted while the session ran?), so the agent cannot be isolated in a worktree",
			"or start the agent without isolation"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var results []string
			// dir and canary are set once the harness exists, before the
			// session starts; the policy reads them under mu.
			var dir, canary string
			keep := func(r *fakeapi.Request) (string, string) {
				mu.Lock()
				defer mu.Unlock()
				results = append(results, clitest.ToolResults(r)...)
				return dir, canary
			}
			conv := clitest.NewConv().On("look",
				func(r *fakeapi.Request) fakeapi.Reply {
					return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Bash", map[string]any{"command": "git status --short; echo first"})}}
				},
				func(r *fakeapi.Request) fakeapi.Reply {
					dir, canary := keep(r)
					if c.repo {
						if err := os.RemoveAll(filepath.Join(dir, ".git")); err != nil {
							t.Error(err)
						}
					}
					return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Bash", map[string]any{
						"command": "git init -q . 2>&1; git config core.fsmonitor 'touch " + canary + "' 2>&1; git status --short 2>&1; echo planted"})}}
				},
				func(r *fakeapi.Request) fakeapi.Reply {
					dir, _ := keep(r)
					return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Write", map[string]any{
						"file_path": filepath.Join(dir, "new.txt"), "content": "y\n"})}}
				},
				func(r *fakeapi.Request) fakeapi.Reply {
					keep(r)
					return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Agent", map[string]any{
						"description": "isolated", "subagent_type": "general-purpose", "isolation": "worktree", "prompt": "HELPER go"})}}
				},
				func(r *fakeapi.Request) fakeapi.Reply {
					keep(r)
					return fakeapi.TextReply("done")
				}).On("HELPER", clitest.Text("helped"))
			h := clitest.New(t, conv.Policy)
			mu.Lock()
			dir, canary = h.Dir, filepath.Join(filepath.Dir(h.Dir), "fsmonitor-ran")
			mu.Unlock()
			clitest.HermeticGit(h)
			if c.repo {
				clitest.GitRepo(t, h, map[string]string{"README.md": "hello\n"})
			} else {
				h.Write("README.md", "hello\n")
			}
			h.Write("changed.txt", "x\n")
			_, errOut, code := h.Run("-p", "look at the repository", "--permission-mode", "bypassPermissions")
			mu.Lock()
			defer mu.Unlock()
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, errOut)
			}
			all := strings.Join(results, "\n---\n")
			if _, err := os.Stat(canary); err == nil {
				t.Errorf("the planted git config's fsmonitor ran; results:\n%s", all)
			}
			if len(results) != 4 {
				t.Errorf("want the results of 4 calls, got %d:\n%s", len(results), all)
			}
			// The model could not make a .git of its own: the project's top
			// takes no new directory while a protected name is missing.
			if _, err := os.Lstat(filepath.Join(h.Dir, ".git")); err == nil {
				out, _ := exec.Command("find", filepath.Join(h.Dir, ".git"), "-ls").CombinedOutput()
				t.Errorf("the model made a .git in the project:\n%s", out)
			}
			for _, w := range c.want {
				if !strings.Contains(errOut+all, w) {
					t.Errorf("neither stderr nor a tool result says %q:\nstderr:\n%s\nresults:\n%s", w, errOut, all)
				}
			}
		})
	}
}

func mustRemove(t *testing.T, p string) {
	t.Helper()
	if err := os.RemoveAll(p); err != nil {
		t.Fatal(err)
	}
}

func mustSymlink(t *testing.T, target, p string) {
	t.Helper()
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}
