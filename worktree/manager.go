package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/internal/gitrepo"
	"github.com/cohort-dev/cohort/internal/safegit"
)

// Errors callers branch on. Returned errors wrap them with the details.
var (
	ErrGitNotFound   = errors.New("worktree: git not found")
	ErrNotRepository = errors.New("worktree: not a git repository")
	ErrInvalidSlug   = errors.New("worktree: invalid slug")
	ErrExists        = errors.New("worktree: already exists")
	// ErrOutsideRepo: the worktrees directory, or a directory on the way
	// to it, is a symlink that leads out of the repository.
	ErrOutsideRepo = errors.New("worktree: worktrees directory resolves outside the repository")
	ErrNotFound    = errors.New("worktree: no such worktree")
	ErrInUse       = errors.New("worktree: in use by another agent")
	ErrDirty       = errors.New("worktree: has changes that removal would lose")
)

// WorktreesDir is where Cohort's worktrees live, relative to the repo root.
const WorktreesDir = ".cohort/worktrees"

// DefaultGrace is how long an unlocked worktree must sit untouched before the
// sweep treats it as orphaned.
const DefaultGrace = 5 * time.Minute

// Config configures a Manager.
type Config struct {
	// Dir is any directory inside the repository, typically the lead's cwd.
	Dir string
	// Git is the git executable: a path, or a name looked up on the PATH of
	// Env. Default "git".
	Git string
	// Env is the environment git runs with. Default os.Environ(). Variables
	// that point git at another repository (GIT_DIR, GIT_WORK_TREE, ...) are
	// always removed.
	Env []string
	// Base is the commit new worktrees start from. Default "HEAD" of the
	// main worktree.
	Base string
	// Symlinks are directories, relative to the repo root, that each new
	// worktree gets as a symlink to the main checkout's copy instead of its
	// own (e.g. "node_modules"), when the main checkout has them and the new
	// checkout does not.
	Symlinks []string
	// Sparse, when non-empty, makes new worktrees cone-mode sparse checkouts
	// of these directories (plus the files at the top level).
	Sparse []string
	// Sandbox confines Cohort's git calls (the session's sandbox.Helper);
	// nil runs them unconfined. Either way the repository's hooks and
	// the other programs its config names do not run (package
	// internal/safegit).
	Sandbox safegit.Launch
	// CommandTimeout bounds every git call. Default 2 minutes.
	CommandTimeout time.Duration
	// Alive reports whether a process exists; the sweep uses it on the pids
	// recorded in lock reasons. Default: signal 0 on Unix.
	Alive func(pid int) bool
	// Now is the clock for the sweep's grace period. Default time.Now.
	Now func() time.Time
	// Grace is how long an unlocked, unkept worktree must be untouched
	// before the sweep may remove it. Default DefaultGrace.
	Grace time.Duration
}

// Owner identifies who uses a worktree; it is recorded in the git lock.
type Owner struct {
	SessionID string
	AgentID   string
}

// Manager creates, inspects and removes the worktrees of one repository.
// It is safe for concurrent use: any number of agents may create and finish
// worktrees at the same time, also from several processes.
type Manager struct {
	git    *gitRunner
	root   string // canonical repo root (main worktree, or the bare repo)
	common string // git common dir
	cfg    Config
	host   string
	pid    int

	excludeMu   sync.Mutex
	excludeDone bool
}

// list returns the repository's worktrees, main first.
func (m *Manager) list(ctx context.Context) ([]listEntry, error) {
	return listWorktrees(ctx, m.git, m.main())
}

// worktreeCmd runs `git worktree <args>` (a command that enumerates the
// worktrees) in the repo root, retrying transient failures.
func (m *Manager) worktreeCmd(ctx context.Context, args ...string) (string, error) {
	return m.git.writeRetry(ctx, m.main(), m.writes(), append([]string{"worktree"}, args...)...)
}

// main is the repository as Cohort names it to git: the main checkout (or
// a bare repository) and the common git dir.
func (m *Manager) main() gitrepo.Layout {
	l := gitrepo.Layout{WorkTree: m.root, DotGit: filepath.Join(m.root, ".git"), GitDir: m.common, CommonDir: m.common}
	if m.root == m.common {
		l.WorkTree, l.DotGit = "", "" // bare
	}
	return l
}

// at is a linked worktree as Cohort names it to git: its administrative
// directory (found from the common dir, never from the worktree's own .git
// file, which its agent can write) and the common dir.
func (m *Manager) at(wt *Worktree) gitrepo.Layout {
	return gitrepo.Layout{WorkTree: wt.Path, DotGit: filepath.Join(wt.Path, ".git"), GitDir: wt.admin, CommonDir: m.common, Linked: true}
}

// Git is the runner of the Manager's git calls (safegit, confined as
// Config.Sandbox says), for others that run git on its worktrees.
func (m *Manager) Git() *safegit.Runner { return m.git.r }

// Repo names the worktree at path (or the main checkout, m.Root()) as
// Cohort names it to git: from the common dir's records, not from the
// worktree's own .git file.
func (m *Manager) Repo(path string) (gitrepo.Layout, error) {
	path = canonical(path)
	if path == m.root {
		return m.main(), nil
	}
	admin, err := m.findAdmin(path)
	if err != nil {
		return gitrepo.Layout{}, err
	}
	return m.at(&Worktree{Path: path, admin: admin}), nil
}

// writes are what Cohort's git calls that change the repository may
// write: the common git dir and the worktrees directory (made here, by
// Cohort, when missing).
func (m *Manager) writes() []string {
	_ = os.MkdirAll(m.worktreesRoot(), 0o755)
	return []string{m.common, m.worktreesRoot()}
}

// New finds git and the canonical root of the repository containing
// cfg.Dir. Without git the error wraps ErrGitNotFound, outside a repository
// ErrNotRepository: isolation was asked for and is impossible, and the
// caller must not fall back to running unisolated.
func New(ctx context.Context, cfg Config) (*Manager, error) {
	if cfg.Dir == "" {
		return nil, errors.New("worktree: Config.Dir is empty; pass the directory the agents work in")
	}
	if err := checkRelDirs("Symlinks", cfg.Symlinks); err != nil {
		return nil, err
	}
	if err := checkRelDirs("Sparse", cfg.Sparse); err != nil {
		return nil, err
	}
	if strings.HasPrefix(cfg.Base, "-") {
		return nil, fmt.Errorf("worktree: base %q is not a git revision", cfg.Base)
	}
	g, err := newGitRunner(ctx, cfg.Git, cfg.Env, cfg.CommandTimeout, cfg.Sandbox)
	if err != nil {
		return nil, err
	}
	if len(cfg.Sparse) > 0 && g.version.less(minGitSparse) {
		return nil, fmt.Errorf("worktree: sparse checkout needs git %s or newer, but %s is %s; upgrade git or drop the sparse setting", minGitSparse, g.path, g.version)
	}
	loc, err := locate(cfg.Dir)
	if err != nil {
		return nil, err
	}
	if cfg.Base == "" {
		cfg.Base = "HEAD"
	}
	if cfg.Alive == nil {
		cfg.Alive = processAlive
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultGrace
	}
	host, _ := os.Hostname()
	return &Manager{git: g, root: loc.root, common: loc.common, cfg: cfg, host: sanitizeField(host), pid: os.Getpid()}, nil
}

// checkRelDirs vets configured directories: relative, inside the repo.
func checkRelDirs(field string, dirs []string) error {
	for i, d := range dirs {
		clean := filepath.ToSlash(filepath.Clean(filepath.FromSlash(d)))
		switch {
		case d == "" || clean == ".":
			return fmt.Errorf("worktree: %s[%d] is empty; name a directory relative to the repo root", field, i)
		case filepath.IsAbs(d) || strings.HasPrefix(d, "/"):
			return fmt.Errorf("worktree: %s[%d] %q is absolute; name it relative to the repo root", field, i, d)
		case clean == ".." || strings.HasPrefix(clean, "../"):
			return fmt.Errorf("worktree: %s[%d] %q leaves the repository", field, i, d)
		case strings.HasPrefix(clean, "-"):
			return fmt.Errorf("worktree: %s[%d] %q starts with '-'", field, i, d)
		case clean == ".git" || strings.HasPrefix(clean, ".git/") || clean == ".cohort" || strings.HasPrefix(clean, WorktreesDir):
			return fmt.Errorf("worktree: %s[%d] %q names git's or Cohort's own directory", field, i, d)
		}
	}
	return nil
}

// Root returns the canonical repo root.
func (m *Manager) Root() string { return m.root }

// Worktree is a worktree handed to one agent. It is owned by that agent:
// its methods' callers must not use one Worktree from several goroutines.
type Worktree struct {
	Path       string // absolute, symlinks resolved
	Branch     string // checked-out branch; "" when HEAD is detached
	Slug       string // relative to WorktreesDir; "" for worktrees elsewhere
	HeadCommit string // HEAD when the handle was made
	BaseCommit string // what changes are measured against; "" if unknown

	admin string   // git's administrative directory for the worktree
	links []string // symlinks Cohort made, relative to Path, slash-separated
}

// worktreesRoot returns <root>/.cohort/worktrees, symlinks resolved (in
// case .cohort is a link) so it compares equal to paths git reports.
func (m *Manager) worktreesRoot() string {
	return canonical(filepath.Join(m.root, filepath.FromSlash(WorktreesDir)))
}

// slugOf returns the slug of a worktree path under worktreesRoot, or "".
func (m *Manager) slugOf(path string) string {
	rel, err := filepath.Rel(m.worktreesRoot(), path)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return ""
	}
	s := filepath.ToSlash(rel)
	if ValidateSlug(s) != nil {
		return ""
	}
	return s
}

// ensureExcluded makes the main checkout ignore WorktreesDir by adding it to
// info/exclude (shared by all worktrees, never tracked), once per Manager.
// Two processes racing here may both append the line; a duplicate pattern
// is harmless.
func (m *Manager) ensureExcluded() error {
	m.excludeMu.Lock()
	defer m.excludeMu.Unlock()
	if m.excludeDone {
		return nil
	}
	if err := m.gitDirGone(); err != nil {
		return err
	}
	if err := safegit.Exclude(m.common, "Cohort agent worktrees", "/"+WorktreesDir+"/"); err != nil {
		return fmt.Errorf("worktree: %w", err)
	}
	m.excludeDone = true
	return nil
}
