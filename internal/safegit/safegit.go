// Package safegit is the one way Cohort runs git on its own behalf: on
// the project's repository, an agent's worktree, a bundle or a patch,
// state a model may have written. internal/arch keeps any other package
// from starting git.
//
// Every call:
//
//   - names the repository to git (GIT_DIR, GIT_COMMON_DIR,
//     GIT_WORK_TREE, from internal/gitrepo's reading of the file system
//     when Cohort first met the repository) so that git discovers nothing
//     from files a command can write: a worktree's .git file, a commondir
//     file;
//   - turns off every program the repository's configuration can name:
//     hooks, core.fsmonitor, the pager, editors, core.sshCommand,
//     credential helpers, gpg programs, external diff, ext:: transports,
//     core.alternateRefsCommand, uploadpack.packObjectsHook (command-line
//     -c settings win over every config file). Filter, diff and merge
//     drivers, whose names the config chooses, are turned off when they
//     are defined in a file the repository's config includes
//     (include.path, includeIf): such a file may lie in a tree commands
//     write. Drivers from the system and global config and from the
//     repository's own config files, which commands cannot write, stay
//     (git-lfs, say);
//   - runs with an environment of Cohort's without the variables that
//     steer git (GIT_*, but the author and committer identity; PAGER,
//     EDITOR, VISUAL, SSH_ASKPASS), with no terminal prompt, in English;
//   - has a deadline (Runner.Timeout, two minutes unless set) at which
//     git and its whole process group are killed and reaped, and dies
//     with the session's launcher when Cohort does: git opens some files
//     of the tree (.gitignore, .gitattributes, a nested repository's
//     HEAD) with a blocking open, and a FIFO there would hold it forever.
//     Confined, git can open no FIFO and no device but /dev/null and
//     /dev/urandom (package sandbox, "Cohort's own programs"); callers
//     keep git off such files where they can see them first (package
//     checkpoint) and say a stall once;
//   - runs through Runner.Sandbox when it is set: confined by the
//     session's sandbox, read-only with no network unless the call names
//     the directories it writes. A sandbox that cannot start the call
//     fails it; git is never started outside a sandbox that was given.
//
// System and global config stay: they are the user's, in places no
// sandboxed command can write, and hold the identity and the drivers the
// user installed.
package safegit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/internal/gitrepo"
	"github.com/cohort-dev/cohort/internal/proc"
)

// Launch returns the launcher that starts a git call confined: nothing
// writable but the given directories (none: read-only), no network.
type Launch func(ctx context.Context, writable []string) (proc.Launcher, error)

// Runner runs git. The zero value runs the git on PATH, unconfined.
// Safe for concurrent use.
type Runner struct {
	// Git is the git executable; "" means "git" looked up on PATH.
	Git string
	// Env is the environment git starts from (nil: Cohort's own); what
	// steers git is removed from it.
	Env []string
	// Sandbox confines every call; nil runs git as Cohort's child (there
	// is no sandbox: it is off, or this system has none).
	Sandbox Launch
	// Timeout bounds each call; 0 means two minutes.
	Timeout time.Duration
}

// Cmd is one git call.
type Cmd struct {
	// Repo is the repository, named to git explicitly. The zero Layout is
	// for calls outside any repository (version, init, apply --numstat);
	// git then discovers nothing either (GIT_CEILING_DIRECTORIES).
	Repo gitrepo.Layout
	// Dir is the working directory; "" means Repo.WorkTree, or the
	// process's own for a call outside a repository.
	Dir string
	// Args follow "git" and the overrides.
	Args []string
	// Stdin feeds the call.
	Stdin []byte
	// Write lists the directories the call may write; none makes it
	// read-only (and then git takes no optional locks).
	Write []string
	// Index, Objects and Alternates point git at an index file and object
	// stores other than the repository's own (GIT_INDEX_FILE,
	// GIT_OBJECT_DIRECTORY, GIT_ALTERNATE_OBJECT_DIRECTORIES): Cohort's
	// private checkpoint store, never a path a command chose.
	Index, Objects string
	Alternates     []string

	listing bool // the config listing of includedDrivers itself
}

// Error is a git call that failed; Stderr is git's message.
type Error struct {
	Args   []string
	Dir    string
	Stderr string
	Err    error
}

func (e *Error) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("git %s (in %s): %s", strings.Join(e.Args, " "), e.Dir, msg)
}

func (e *Error) Unwrap() error { return e.Err }

// overrides turn off what the configuration can make git run.
var overrides = []string{
	"core.hooksPath=" + os.DevNull,
	"core.fsmonitor=false",
	"core.pager=cat",
	"core.editor=true",
	"sequence.editor=true",
	"core.sshCommand=false",
	"core.askPass=",
	"credential.helper=",
	"gpg.program=false",
	"gpg.ssh.program=false",
	"gpg.x509.program=false",
	"commit.gpgSign=false",
	"tag.gpgSign=false",
	"diff.external=",
	"protocol.ext.allow=never",
	"core.alternateRefsCommand=",
	"uploadpack.packObjectsHook=",
}

// Run runs c and returns its standard output.
func (r *Runner) Run(ctx context.Context, c Cmd) (string, error) {
	path := r.Git
	if path == "" {
		path = "git"
	}
	if !filepath.IsAbs(path) {
		p, err := exec.LookPath(path)
		if err != nil {
			return "", fmt.Errorf("git not found: %w", err)
		}
		path = p
	}
	dir := c.Dir
	if dir == "" {
		dir = c.Repo.WorkTree
	}
	full, err := r.args(ctx, path, c)
	if err != nil {
		return "", err
	}
	cmd := proc.Command{Path: path, Args: full, Dir: dir, Env: r.env(c), Timeout: r.timeout(), NewSession: true}
	if c.Stdin != nil {
		cmd.Stdin = bytes.NewReader(c.Stdin)
	}
	if r.Sandbox != nil {
		l, err := r.Sandbox(ctx, c.Write)
		if err != nil {
			return "", &Error{Args: c.Args, Dir: dir, Err: fmt.Errorf("git not run: the sandbox cannot start it: %w", err)}
		}
		cmd.Launcher = l
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	exit, err := proc.Run(ctx, cmd)
	switch {
	case err != nil:
	case errors.Is(exit.Stopped, proc.ErrTimeout):
		err = fmt.Errorf("%w: git ran longer than %s and was stopped", context.DeadlineExceeded, r.timeout())
	case exit.Stopped != nil:
		err = fmt.Errorf("%w (%s)", exit.Stopped, exit)
	case !exit.Success():
		err = errors.New(exit.String())
	}
	if err != nil {
		return stdout.String(), &Error{Args: c.Args, Dir: dir, Stderr: stderr.String(), Err: err}
	}
	return stdout.String(), nil
}

func (r *Runner) timeout() time.Duration {
	if r.Timeout > 0 {
		return r.Timeout
	}
	return 2 * time.Minute
}

// args puts the overrides before c.Args, and for a repository whose
// config includes other files, turns off the drivers those define.
func (r *Runner) args(ctx context.Context, path string, c Cmd) ([]string, error) {
	var full []string
	for _, o := range overrides {
		full = append(full, "-c", o)
	}
	if c.Repo.GitDir != "" && !c.listing && includes(c.Repo) {
		drivers, err := r.includedDrivers(ctx, path, c.Repo)
		if err != nil {
			return nil, err
		}
		for _, d := range drivers {
			full = append(full, "-c", d)
		}
	}
	return append(full, c.Args...), nil
}

// env is the call's environment.
func (r *Runner) env(c Cmd) []string {
	base := r.Env
	if base == nil {
		base = os.Environ()
	}
	out := make([]string, 0, len(base)+12)
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "GIT_AUTHOR_") || strings.HasPrefix(k, "GIT_COMMITTER_"):
		case strings.HasPrefix(k, "GIT_"), k == "PAGER", k == "EDITOR", k == "VISUAL", k == "SSH_ASKPASS",
			k == "LC_ALL", k == "LANGUAGE":
			continue
		}
		out = append(out, kv)
	}
	out = append(out, "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "GIT_EDITOR=true", "LC_ALL=C", "LANGUAGE=")
	if len(c.Write) == 0 {
		out = append(out, "GIT_OPTIONAL_LOCKS=0")
	}
	if c.Index != "" {
		out = append(out, "GIT_INDEX_FILE="+c.Index)
	}
	if c.Objects != "" {
		out = append(out, "GIT_OBJECT_DIRECTORY="+c.Objects)
	}
	if len(c.Alternates) > 0 {
		out = append(out, "GIT_ALTERNATE_OBJECT_DIRECTORIES="+strings.Join(c.Alternates, string(filepath.ListSeparator)))
	}
	if c.Repo.GitDir != "" {
		out = append(out, c.Repo.Env()...)
	} else {
		// Outside a repository: discover none above the directory.
		dir := c.Dir
		if dir == "" {
			dir, _ = os.Getwd()
		}
		out = append(out, "GIT_CEILING_DIRECTORIES="+filepath.Dir(dir))
	}
	return out
}

// OnPath is the git executable an environment's PATH names (its absolute
// folders only, in order), or "" when it names none: a Runner's Git for
// calls that should find git as the session's own commands do.
func OnPath(env []string) string {
	var path string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue // never a git the working folder provides
		}
		p := filepath.Join(dir, "git")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}
