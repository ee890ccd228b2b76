package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Create makes a new worktree for an agent: <root>/.cohort/worktrees/<slug>
// on a new branch cohort/<slug> at the configured base, locked for owner
// until Finish, Keep or Remove. Configured directories are symlinked from
// the main checkout and, if configured, the checkout is sparse.
//
// An invalid slug wraps ErrInvalidSlug; a slug whose directory or branch is
// taken wraps ErrExists; a worktrees directory that a symlink leads out of
// the repository wraps ErrOutsideRepo. On any failure nothing is left behind.
func (m *Manager) Create(ctx context.Context, slug string, owner Owner) (*Worktree, error) {
	return m.CreateAt(ctx, slug, owner, "")
}

// CreateAt is Create from base (a commit or any revision) instead of the
// configured base; "" means the configured one. A remote agent's work is
// applied on a worktree at the commit its job started from.
func (m *Manager) CreateAt(ctx context.Context, slug string, owner Owner, base string) (*Worktree, error) {
	if err := ValidateSlug(slug); err != nil {
		return nil, err
	}
	branch := BranchPrefix + slug
	if err := m.ensureExcluded(); err != nil {
		return nil, err
	}
	if base == "" {
		base = m.cfg.Base
	}
	base, err := m.resolveBase(ctx, base)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(m.worktreesRoot(), filepath.FromSlash(slug))
	if err := m.checkInside(slug); err != nil {
		return nil, err
	}
	if err := m.checkFree(slug, path); err != nil {
		return nil, err
	}
	wt := &Worktree{Path: path, Branch: branch, Slug: slug, HeadCommit: base, BaseCommit: base}
	if err := m.add(ctx, wt, owner); err != nil {
		return nil, err
	}
	if err := m.setUp(ctx, wt); err != nil {
		return nil, errors.Join(fmt.Errorf("worktree: set up %s: %w", path, err), m.discard(ctx, wt))
	}
	return wt, nil
}

// resolveBase turns the configured base into a commit id.
func (m *Manager) resolveBase(ctx context.Context, base string) (string, error) {
	out, err := m.git.readRetry(ctx, m.main(), "rev-parse", "--verify", "--end-of-options", base+"^{commit}")
	if err != nil {
		if gone := m.gitDirGone(); gone != nil {
			return "", gone
		}
		if base == "HEAD" {
			return "", fmt.Errorf("worktree: no commit to start a worktree from (a repository without commits?); commit something first: %w", err)
		}
		return "", fmt.Errorf("worktree: base %q is not a commit; fix the configured base: %w", base, err)
	}
	return strings.TrimSpace(out), nil
}

// gitDirGone reports the repository's git dir missing (its .git deleted
// while the session ran, say), with the path and what to do; nil while it
// is there. git's own error ("not a git repository") would read as if the
// project had never been one.
func (m *Manager) gitDirGone() error {
	if _, err := os.Stat(m.common); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return fmt.Errorf("%w: %s, the repository's git directory, no longer exists (was .git deleted while the session ran?), so the agent cannot be isolated in a worktree; restore the repository (or git init and commit) and start a new session, or start the agent without isolation", ErrNotRepository, m.common)
}

// checkInside refuses a worktrees directory, or any directory on the way
// from the repository root to the new worktree, that resolves outside the
// root: a cloned repository can commit .cohort or .cohort/worktrees as a
// symlink, and an agent's worktree must never land elsewhere.
func (m *Manager) checkInside(slug string) error {
	root := canonical(m.root)
	dir := m.root
	parts := append(strings.Split(filepath.ToSlash(WorktreesDir), "/"), strings.Split(slug, "/")...)
	for _, seg := range parts {
		dir = filepath.Join(dir, seg)
		real, err := filepath.EvalSymlinks(dir)
		if errors.Is(err, os.ErrNotExist) {
			if fi, lerr := os.Lstat(dir); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
				return fmt.Errorf("%w: %s is a symlink to a missing target; remove it", ErrOutsideRepo, dir)
			}
			return nil // the rest is created by git, inside
		}
		if err != nil {
			return fmt.Errorf("worktree: resolve %s: %w", dir, err)
		}
		if !within(real, root) {
			return fmt.Errorf("%w: %s leads to %s; remove the symlink (a repository must not choose where agent worktrees go)", ErrOutsideRepo, dir, real)
		}
	}
	return nil
}

// checkFree refuses a slug whose directory exists or would sit inside
// another worktree (slug "a/b" while "a" exists).
func (m *Manager) checkFree(slug, path string) error {
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%w: %s exists; pick another slug", ErrExists, path)
	}
	dir := m.worktreesRoot()
	segs := strings.Split(slug, "/")
	for _, seg := range segs[:len(segs)-1] {
		dir = filepath.Join(dir, seg)
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return fmt.Errorf("%w: slug %q would nest inside worktree %s; pick another slug", ErrExists, slug, dir)
		}
	}
	return nil
}

// add creates the branch, then registers the worktree on it, locked from
// the first moment so that no sweep can mistake it for an orphan. Creating
// the branch first settles who owns a slug: a concurrent Create of the same
// slug, here or in another process, fails on the existing branch and never
// touches ours. The checkout itself happens in setUp.
func (m *Manager) add(ctx context.Context, wt *Worktree, owner Owner) error {
	_, err := m.git.writeRetry(ctx, m.main(), m.writes(), "branch", "--no-track", wt.Branch, wt.BaseCommit)
	var ge *GitError
	if errors.As(err, &ge) && (strings.Contains(ge.Stderr, "already exists") || strings.Contains(ge.Stderr, "exists; cannot create")) {
		return fmt.Errorf("%w: %v; pick another slug", ErrExists, err)
	}
	if err != nil {
		return err
	}
	reason := lockReason{PID: m.pid, Session: owner.SessionID, Agent: owner.AgentID, Host: m.host, Base: wt.BaseCommit}
	_, err = m.worktreeCmd(ctx, "add", "--quiet", "--no-checkout", "--lock", "--reason", reason.String(), wt.Path, wt.Branch)
	if errors.As(err, &ge) && strings.Contains(ge.Stderr, "already exists") {
		err = fmt.Errorf("%w: %v; pick another slug", ErrExists, err)
	}
	if err != nil {
		return errors.Join(err, m.deleteBranch(ctx, wt.Branch, wt.BaseCommit))
	}
	return nil
}

// setUp finishes a fresh worktree: records, sparse checkout, symlinks.
func (m *Manager) setUp(ctx context.Context, wt *Worktree) error {
	wt.Path = canonical(wt.Path)
	admin, err := m.findAdmin(wt.Path)
	if err != nil {
		return err
	}
	wt.admin = admin
	if err := writeMeta(admin, baseFile, wt.BaseCommit+"\n"); err != nil {
		return err
	}
	if len(m.cfg.Sparse) > 0 {
		args := append([]string{"sparse-checkout", "set", "--cone", "--"}, m.cfg.Sparse...)
		if _, err := m.git.writeRetry(ctx, m.at(wt), m.writes(), args...); err != nil {
			return err
		}
	}
	// The checkout proper: fill the index and the working tree from HEAD
	// (only the cone, when sparse).
	if _, err := m.git.writeRetry(ctx, m.at(wt), m.writes(), "read-tree", "-mu", "HEAD"); err != nil {
		return err
	}
	links, err := m.makeLinks(wt.Path)
	wt.links = links
	if len(links) > 0 {
		if werr := writeMeta(admin, linksFile, strings.Join(links, "\n")+"\n"); werr != nil {
			return errors.Join(err, werr)
		}
	}
	return err
}

// makeLinks symlinks each configured directory that exists in the main
// checkout and is absent from the new one (whose parent must exist: a
// directory outside a sparse cone gets no link).
func (m *Manager) makeLinks(path string) ([]string, error) {
	var made []string
	for _, d := range m.cfg.Symlinks {
		rel := filepath.Clean(filepath.FromSlash(d))
		src := filepath.Join(m.root, rel)
		if fi, err := os.Stat(src); err != nil || !fi.IsDir() {
			continue
		}
		dst := filepath.Join(path, rel)
		if _, err := os.Lstat(dst); err == nil {
			continue // the checkout has its own
		}
		if fi, err := os.Stat(filepath.Dir(dst)); err != nil || !fi.IsDir() {
			continue
		}
		if err := os.Symlink(src, dst); err != nil {
			return made, fmt.Errorf("worktree: link %s: %w", d, err)
		}
		made = append(made, filepath.ToSlash(rel))
	}
	return made, nil
}
