package worktree

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cohort-dev/cohort/tool"
)

// CommandGuard keeps an agent that works in a worktree out of the main checkout.
// File tools ask CheckWrite about every path they write (it delegates to
// the worktree library's guard); the Bash tool asks CheckCommand about
// every command line (see the package doc for what that analysis covers).
// A CommandGuard is immutable and safe for concurrent use.
type CommandGuard struct {
	files    tool.WriteGuard
	worktree string
	root     string
	home     string
}

var _ tool.WriteGuard = (*CommandGuard)(nil)

// NewCommandGuard returns the guard of an agent working in the worktree at path.
// files vets single paths (worktree.Manager.Guard); root is the canonical
// repository root, which a command may not aim a writing program at as a
// whole (rm -r on a directory above it, say); home expands "~" in commands
// (default: $HOME).
func NewCommandGuard(files tool.WriteGuard, path, root, home string) *CommandGuard {
	if home == "" {
		home = os.Getenv("HOME")
	}
	return &CommandGuard{files: files, worktree: filepath.Clean(path), root: canonicalPrefix(root), home: home}
}

// Worktree returns the path of the worktree the guard confines to.
func (g *CommandGuard) Worktree() string { return g.worktree }

// Root returns the repository root the guard protects.
func (g *CommandGuard) Root() string { return g.root }

// CheckWrite implements tool.WriteGuard.
func (g *CommandGuard) CheckWrite(path string) error { return g.files.CheckWrite(path) }

// CheckCommand vets a shell command line that is about to run in dir. It
// returns an error wrapping worktree.ErrOutsideWorktree, written for the
// model, when the line aims a write at the main checkout or when the
// analysis cannot tell where it writes.
func (g *CommandGuard) CheckCommand(command, dir string) error {
	err := g.check(command, dir)
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %v. This agent is isolated in the worktree %s, a full checkout of the same repository: run the command there, on the worktree's copies of the files", ErrOutsideWorktree, err, g.worktree)
}

// checkPath refuses a path a writing command names: inside a protected
// tree, or a directory that holds the repository root.
func (g *CommandGuard) checkPath(p string) error {
	if err := g.files.CheckWrite(p); err != nil {
		return errors.New(trimSentinel(err))
	}
	if above(canonicalPrefix(p), g.root) {
		return fmt.Errorf("%s contains the main checkout %s", p, g.root)
	}
	return nil
}

// above reports whether dir lies strictly above p.
func above(dir, p string) bool {
	if dir == p {
		return false
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(p, dir)
}

// canonicalPrefix resolves symlinks in the longest existing prefix of an
// absolute path and appends the rest.
func canonicalPrefix(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for cur := p; ; {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(real, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// trimSentinel returns a guard error's text without the sentinel prefix,
// for messages that say it in their own words.
func trimSentinel(err error) string {
	s := strings.TrimPrefix(err.Error(), ErrOutsideWorktree.Error()+": ")
	if i := strings.Index(s, ", but this agent is isolated in the worktree"); i > 0 {
		s = s[:i] // the caller says that in its own words
	}
	return s
}
