package worktree

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Minimum git versions: `worktree add --lock --reason` arrived in 2.33 and
// `sparse-checkout set --cone` in 2.35.
var (
	minGit       = version{2, 33, 0}
	minGitSparse = version{2, 35, 0}
)

// repoLocatingEnv are variables that make git act on some other repository
// than the directory it runs in. A Cohort started from inside a git hook
// inherits them; every command here names its directory explicitly instead.
var repoLocatingEnv = []string{
	"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR",
	"GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
	"GIT_NAMESPACE", "GIT_PREFIX", "GIT_QUARANTINE_PATH",
}

// gitRunner runs the git binary. It is immutable after construction and safe
// for concurrent use.
type gitRunner struct {
	path    string   // absolute path of the executable
	env     []string // complete environment of every call
	timeout time.Duration
	hooks   bool
	version version
}

// GitError is a git command that failed. Stderr holds git's own message.
type GitError struct {
	Args   []string // arguments after "git"
	Dir    string
	Stderr string
	Err    error // the exec error (exit status, context deadline, ...)
}

func (e *GitError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = e.Err.Error()
	} else if errors.Is(e.Err, context.DeadlineExceeded) || errors.Is(e.Err, context.Canceled) {
		msg = e.Err.Error() + ": " + msg
	}
	return fmt.Sprintf("git %s (in %s): %s", strings.Join(e.Args, " "), e.Dir, msg)
}

func (e *GitError) Unwrap() error { return e.Err }

// newGitRunner finds git (name, or "git", looked up on env's PATH), checks
// its version and fixes the environment every call runs with.
func newGitRunner(ctx context.Context, name string, env []string, timeout time.Duration, hooks bool) (*gitRunner, error) {
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
	g := &gitRunner{path: path, env: gitEnv(env), timeout: timeout, hooks: hooks}
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
	out, err := g.run(ctx, "", "version")
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

// gitEnv drops repository-locating variables and fixes the settings that
// keep git non-interactive and its messages parseable.
func gitEnv(env []string) []string {
	out := make([]string, 0, len(env)+6)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		drop := k == "LC_ALL" || k == "LANGUAGE" || k == "GIT_TERMINAL_PROMPT" || k == "GIT_PAGER" || k == "GIT_OPTIONAL_LOCKS"
		for _, r := range repoLocatingEnv {
			drop = drop || k == r
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return append(out,
		"GIT_TERMINAL_PROMPT=0", // never wait for credentials
		"GIT_PAGER=cat",
		"LC_ALL=C", // lock-contention detection reads English messages
		"LANGUAGE=",
	)
}

// run executes git with args in dir and returns its stdout. dir "" means the
// process's working directory (only used for `git version`).
func (g *gitRunner) run(ctx context.Context, dir string, args ...string) (string, error) {
	return g.runEnv(ctx, dir, nil, args...)
}

// runRead is run for commands that only read: git then skips the optional
// index refresh that would take index.lock.
func (g *gitRunner) runRead(ctx context.Context, dir string, args ...string) (string, error) {
	return g.runEnv(ctx, dir, []string{"GIT_OPTIONAL_LOCKS=0"}, args...)
}

func (g *gitRunner) runEnv(ctx context.Context, dir string, extra []string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	full := make([]string, 0, len(args)+4)
	if !g.hooks {
		full = append(full, "-c", "core.hooksPath="+os.DevNull)
	}
	full = append(full, args...)
	cmd := exec.CommandContext(ctx, g.path, full...)
	cmd.Dir = dir
	cmd.Env = slices.Concat(g.env, extra) // never append to the shared slice
	// Output goes to temporary files, not pipes: with pipes, Wait also
	// waits for Go's copying goroutines, and on an overloaded machine that
	// can outlast WaitDelay and fail a command that succeeded.
	stdout, err := tempOutput()
	if err != nil {
		return "", err
	}
	defer stdout.close()
	stderr, err := tempOutput()
	if err != nil {
		return "", err
	}
	defer stderr.close()
	cmd.Stdout, cmd.Stderr = stdout.f, stderr.f
	setProcessGroup(cmd)
	err = cmd.Run()
	if ctx.Err() != nil {
		killProcessGroup(cmd)
	}
	out, rerr := stdout.read()
	if err == nil && rerr != nil {
		return "", fmt.Errorf("worktree: read git output: %w", rerr)
	}
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		msg, _ := stderr.read()
		return out, &GitError{Args: args, Dir: dir, Stderr: msg, Err: err}
	}
	return out, nil
}

// outputFile is an unnamed-in-spirit temporary file that collects a
// command's output.
type outputFile struct{ f *os.File }

func tempOutput() (outputFile, error) {
	f, err := os.CreateTemp("", "cohort-git-")
	if err != nil {
		return outputFile{}, fmt.Errorf("worktree: temporary file for git output: %w", err)
	}
	if runtime.GOOS != "windows" {
		_ = os.Remove(f.Name()) // unlinked at once; the open file still works
	}
	return outputFile{f}, nil
}

func (o outputFile) read() (string, error) {
	if _, err := o.f.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	data, err := io.ReadAll(o.f)
	return string(data), err
}

func (o outputFile) close() {
	_ = o.f.Close()
	if runtime.GOOS == "windows" {
		_ = os.Remove(o.f.Name())
	}
}

// runRetry runs a command, retrying with jittered exponential backoff while
// it fails for a transient reason (see transient). Only use it for commands
// that are safe to repeat after such a failure: git takes its locks and
// enumerates worktrees before it changes anything.
func (g *gitRunner) runRetry(ctx context.Context, dir string, args ...string) (string, error) {
	return retry(ctx, func() (string, error) { return g.run(ctx, dir, args...) })
}

// runReadRetry is runRead with runRetry's retries.
func (g *gitRunner) runReadRetry(ctx context.Context, dir string, args ...string) (string, error) {
	return retry(ctx, func() (string, error) { return g.runRead(ctx, dir, args...) })
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
	if errors.Is(err, exec.ErrWaitDelay) {
		// git exited but its output did not arrive within WaitDelay (an
		// overloaded machine); the output may be cut, so run it again.
		return true
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
