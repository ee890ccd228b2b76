package worktree

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/internal/gitrepo"
	"github.com/cohort-dev/cohort/internal/safegit"
)

// Minimum git versions: `worktree add --lock --reason` arrived in 2.33 and
// `sparse-checkout set --cone` in 2.35.
var (
	minGit       = version{2, 33, 0}
	minGitSparse = version{2, 35, 0}
)

// gitRunner runs Cohort's git calls through safegit: the repository named
// explicitly, the programs its config names turned off, and confined by
// the session's sandbox when there is one. It is immutable after
// construction and safe for concurrent use.
type gitRunner struct {
	r       *safegit.Runner
	path    string // absolute path of the executable
	version version
}

// GitError is a git command that failed. Stderr holds git's own message.
type GitError = safegit.Error

// newGitRunner finds git (name, or "git", looked up on env's PATH) and
// checks its version.
func newGitRunner(ctx context.Context, name string, env []string, timeout time.Duration, sandbox safegit.Launch) (*gitRunner, error) {
	if env == nil {
		env = os.Environ()
	}
	if name == "" {
		name = "git"
	}
	path, err := lookPath(name, envValue(env, "PATH"))
	if err != nil {
		return nil, fmt.Errorf("%w: worktree isolation was requested but %v; install git or run the agent without isolation", ErrGitNotFound, err)
	}
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	g := &gitRunner{r: &safegit.Runner{Git: path, Env: env, Sandbox: sandbox, Timeout: timeout}, path: path}
	v, err := g.checkVersion(ctx)
	if err != nil {
		return nil, err
	}
	g.version = v
	return g, nil
}

// versions caches checked git versions by executable (path, size and
// modification time), so that making a Manager costs no `git version`.
var versions sync.Map

func (g *gitRunner) checkVersion(ctx context.Context) (version, error) {
	key := g.path
	if fi, err := os.Stat(g.path); err == nil {
		key = fmt.Sprintf("%s\x00%d\x00%d", g.path, fi.Size(), fi.ModTime().UnixNano())
	}
	if v, ok := versions.Load(key); ok {
		return v.(version), nil
	}
	out, err := g.r.Run(ctx, safegit.Cmd{Dir: os.TempDir(), Args: []string{"version"}})
	if err != nil {
		return version{}, fmt.Errorf("%w: running %s failed: %v", ErrGitNotFound, g.path, err)
	}
	v, ok := parseVersion(out)
	if !ok {
		return version{}, fmt.Errorf("worktree: cannot read the version of %s from %q", g.path, strings.TrimSpace(out))
	}
	if v.less(minGit) {
		return version{}, fmt.Errorf("worktree: isolation needs git %s or newer, but %s is %s; upgrade git", minGit, g.path, v)
	}
	versions.Store(key, v)
	return v, nil
}

// lookPath resolves name against pathList (not the process's PATH, so that a
// configured environment decides which git runs).
func lookPath(name, pathList string) (string, error) {
	if strings.ContainsRune(name, filepath.Separator) || (runtime.GOOS == "windows" && strings.ContainsRune(name, '/')) {
		p, err := exec.LookPath(name)
		if err != nil {
			return "", fmt.Errorf("git executable %s is not usable: %v", name, err)
		}
		return filepath.Abs(p)
	}
	for _, dir := range filepath.SplitList(pathList) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue // relative PATH entries are a classic hijack; skip them
		}
		if p, err := exec.LookPath(filepath.Join(dir, name)); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no %q executable was found on PATH (%s)", name, pathList)
}

func envValue(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v
		}
	}
	return ""
}

// read runs a git command that only reads repo (it then takes no
// optional lock either) and returns its stdout.
func (g *gitRunner) read(ctx context.Context, repo gitrepo.Layout, args ...string) (string, error) {
	return g.r.Run(ctx, safegit.Cmd{Repo: repo, Dir: repoDir(repo), Args: args})
}

// write runs a git command that may write the directories in dirs.
func (g *gitRunner) write(ctx context.Context, repo gitrepo.Layout, dirs []string, args ...string) (string, error) {
	return g.r.Run(ctx, safegit.Cmd{Repo: repo, Dir: repoDir(repo), Args: args, Write: dirs})
}

// repoDir is where a call on repo runs: its working tree, or for a bare
// repository its git dir.
func repoDir(repo gitrepo.Layout) string {
	if repo.WorkTree != "" {
		return repo.WorkTree
	}
	return repo.GitDir
}

// readRetry is read, retried while it fails for a transient reason (see
// transient).
func (g *gitRunner) readRetry(ctx context.Context, repo gitrepo.Layout, args ...string) (string, error) {
	return retry(ctx, func() (string, error) { return g.read(ctx, repo, args...) })
}

// writeRetry is write, retried while it fails for a transient reason. Only
// use it for commands that are safe to repeat after such a failure: git
// takes its locks and enumerates worktrees before it changes anything.
func (g *gitRunner) writeRetry(ctx context.Context, repo gitrepo.Layout, dirs []string, args ...string) (string, error) {
	return retry(ctx, func() (string, error) { return g.write(ctx, repo, dirs, args...) })
}

// retry calls f until it succeeds, fails for a reason that is not
// transient, or has failed ten times (about five seconds of backoff).
func retry(ctx context.Context, f func() (string, error)) (string, error) {
	delay := 10 * time.Millisecond
	for attempt := 0; ; attempt++ {
		out, err := f()
		if err == nil || !transient(err) || attempt >= 9 {
			return out, err
		}
		// Jitter keeps twenty contenders from retrying in lockstep.
		if serr := sleep(ctx, delay/2+rand.N(delay)); serr != nil {
			return out, fmt.Errorf("%w (while waiting out a concurrent git: %v)", serr, err)
		}
		delay = min(2*delay, time.Second)
	}
}

// transient reports whether err is git tripping over another git process:
// a lock file it holds (index.lock, config.lock, a ref's lock), or a
// worktree being added or removed — `git worktree add` writes the files of
// its administrative directory one by one and `remove` deletes them, and a
// concurrent command that enumerates worktrees dies on a half-written or
// vanished one ("failed to read .git/worktrees/x/commondir", "Invalid path
// '.git/worktrees/x'"). Such commands fail before they change anything.
func transient(err error) bool {
	var ge *GitError
	if !errors.As(err, &ge) {
		return false
	}
	s := ge.Stderr
	return (strings.Contains(s, ".lock") && strings.Contains(s, "File exists")) ||
		strings.Contains(s, "could not lock config file") ||
		(strings.Contains(s, "/worktrees/") && (strings.Contains(s, "failed to read") || strings.Contains(s, "Invalid path") || strings.Contains(s, "No such file or directory")))
}

// version is a git version triple.
type version [3]int

func (v version) String() string { return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]) }

func (v version) less(o version) bool {
	for i := range v {
		if v[i] != o[i] {
			return v[i] < o[i]
		}
	}
	return false
}

// parseVersion reads `git version` output such as "git version 2.39.5",
// "git version 2.39.3 (Apple Git-146)" or "git version 2.45.1.windows.1".
func parseVersion(s string) (version, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(s), "git version ")
	if !ok {
		return version{}, false
	}
	rest, _, _ = strings.Cut(rest, " ")
	parts := strings.Split(rest, ".")
	var v version
	for i := 0; i < 3 && i < len(parts); i++ {
		digits := parts[i]
		if j := strings.IndexFunc(digits, func(r rune) bool { return r < '0' || r > '9' }); j >= 0 {
			digits = digits[:j] // "0-rc1"
		}
		n, err := strconv.Atoi(digits)
		if err != nil {
			if i < 2 {
				return version{}, false
			}
			break
		}
		v[i] = n
	}
	if len(parts) < 2 {
		return version{}, false
	}
	return v, true
}

// sleep waits for d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
