package worktree

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// childEnv makes the test binary act as a Cohort process that creates
// worktrees (see runChild) instead of running tests.
const childEnv = "COHORT_WORKTREE_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(runChild(mode))
	}
	goleak.VerifyTestMain(m)
}

// runChild: mode "hold" creates one worktree (COHORT_TEST_SLUG), makes it
// dirty if COHORT_TEST_DIRTY is set, prints "ready <path>" and waits to be
// killed; mode "many" creates COHORT_TEST_N worktrees concurrently, prints
// "done" and exits, leaving them locked by its (then dead) pid.
func runChild(mode string) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m, err := New(ctx, Config{Dir: os.Getenv("COHORT_TEST_REPO")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	owner := Owner{SessionID: "child-session", AgentID: "child-agent"}
	switch mode {
	case "hold":
		wt, err := m.Create(ctx, os.Getenv("COHORT_TEST_SLUG"), owner)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if os.Getenv("COHORT_TEST_DIRTY") != "" {
			if err := os.WriteFile(filepath.Join(wt.Path, "unsaved.txt"), []byte("work in progress\n"), 0o644); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
		fmt.Printf("ready %s\n", wt.Path)
		<-ctx.Done() // the parent kills us long before
		return 1
	case "many":
		n, _ := strconv.Atoi(os.Getenv("COHORT_TEST_N"))
		prefix := os.Getenv("COHORT_TEST_SLUG")
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { _, errs[i] = m.Create(ctx, fmt.Sprintf("%s-%d", prefix, i), owner) })
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
		fmt.Println("done")
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown child mode", mode)
	return 2
}

// testRepo is a git repository in a temporary directory with a hermetic
// git environment (no global or system config, HOME elsewhere).
type testRepo struct {
	t   *testing.T
	dir string
	env []string
}

func hermeticEnv(t *testing.T) []string {
	home := t.TempDir()
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"COHORT_HOME=" + filepath.Join(home, ".cohort"),
		"GIT_CONFIG_GLOBAL=" + os.DevNull,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=Test Author", "GIT_AUTHOR_EMAIL=author@example.com",
		"GIT_COMMITTER_NAME=Test Committer", "GIT_COMMITTER_EMAIL=committer@example.com",
		// Never find a repository above the temporary directories.
		"GIT_CEILING_DIRECTORIES=" + filepath.Dir(canonical(t.TempDir())),
	}
}

// newRepo makes a repository with one commit: README.md, src/main.go,
// docs/guide.md and a .gitignore for build/ and node_modules/.
func newRepo(t *testing.T) *testRepo {
	t.Helper()
	r := &testRepo{t: t, dir: canonical(t.TempDir()), env: hermeticEnv(t)}
	r.git("init", "--quiet", "--initial-branch=main")
	r.write("README.md", "# demo\n")
	r.write("src/main.go", "package main\n")
	r.write("docs/guide.md", "guide\n")
	r.write(".gitignore", "build/\nnode_modules/\n")
	r.git("add", ".")
	r.git("commit", "--quiet", "-m", "initial commit")
	return r
}

// git runs git in the repository and returns trimmed stdout.
func (r *testRepo) git(args ...string) string {
	r.t.Helper()
	return r.gitIn(r.dir, args...)
}

func (r *testRepo) gitIn(dir string, args ...string) string {
	r.t.Helper()
	cmd := exec.CommandContext(r.t.Context(), "git", args...)
	cmd.Dir = dir
	cmd.Env = r.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
	return strings.TrimSpace(string(out))
}

// write creates a file (and its directories) relative to the repository.
func (r *testRepo) write(rel, content string) {
	r.t.Helper()
	writeFile(r.t, filepath.Join(r.dir, rel), content)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// manager returns a Manager for the repository; cfg.Dir and cfg.Env
// default to the repository and its hermetic environment.
func (r *testRepo) manager(cfg Config) *Manager {
	r.t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = r.dir
	}
	if cfg.Env == nil {
		cfg.Env = r.env
	}
	m, err := New(r.t.Context(), cfg)
	if err != nil {
		r.t.Fatal(err)
	}
	return m
}

// branches lists the cohort/ branches.
func (r *testRepo) branches() []string {
	r.t.Helper()
	out := r.git("for-each-ref", "--format=%(refname:short)", "refs/heads/cohort/")
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// worktrees lists the registered worktree paths, main first.
func (r *testRepo) worktrees() []string {
	r.t.Helper()
	var paths []string
	for _, e := range parseWorktreeList(r.git("worktree", "list", "--porcelain") + "\n") {
		paths = append(paths, e.Path)
	}
	return paths
}

// child is the test binary running as another Cohort process.
type child struct {
	cmd  *exec.Cmd
	out  *bufio.Reader
	once sync.Once
	err  error
}

// startChild runs the test binary as a child Cohort process in mode. The
// child is killed and reaped at the end of the test if still running.
func startChild(t *testing.T, r *testRepo, mode string, extra ...string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(append([]string{}, r.env...), childEnv+"="+mode, "COHORT_TEST_REPO="+r.dir), extra...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, out: bufio.NewReader(stdout)}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = c.wait()
	})
	return c
}

// line reads one line of the child's output.
func (c *child) line() string {
	s, _ := c.out.ReadString('\n')
	return strings.TrimSuffix(s, "\n")
}

// wait reaps the child once and returns its exit error.
func (c *child) wait() error {
	c.once.Do(func() { c.err = c.cmd.Wait() })
	return c.err
}
