package worktree

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/tool"
)

// ErrOutsideWorktree is a write refused by a Guard.
var ErrOutsideWorktree = errors.New("worktree: write outside the agent's worktree refused")

// Guard keeps an agent isolated in a worktree out of the main checkout.
// File tools ask CheckWrite about every path they write; the Bash tool
// asks CheckCommand about every command line (see the package doc for
// what that analysis covers).
//
// CheckWrite refuses a write whose target — after resolving "..", and
// symlinks in every existing component, dangling ones included — lies
// inside a protected tree (the main checkout, git's directory, the
// repository's other worktrees) but not inside the agent's own worktree.
// Writes outside the repository entirely (temporary files, the memory
// directory, ...) are allowed: isolation protects the checkout, it is not
// a sandbox. Relative paths and paths that cannot be resolved are refused
// (fail closed).
//
// The set of protected trees is fixed when the Guard is made. A Guard is
// immutable and safe for concurrent use.
type Guard struct {
	worktree  string   // the worktree, as given (cleaned)
	allowed   string   // the worktree, canonical
	protected []string // canonical trees a write may not enter
	root      string   // the canonical repository root
	home      string   // expands "~" in commands
}

var _ tool.WriteGuard = (*Guard)(nil)

// NewGuard returns the guard of an agent working in the worktree at path
// of the repository whose root is root: writes inside path are allowed,
// writes inside root or any of protected refused, and a command may not
// aim a writing program at root as a whole (rm -r on a directory above it,
// say). home expands "~" in commands (default: $HOME). All paths must be
// absolute.
func NewGuard(path, root, home string, protected ...string) *Guard {
	if home == "" {
		home = os.Getenv("HOME")
	}
	g := &Guard{worktree: filepath.Clean(path), allowed: canonical(path), root: canonicalPrefix(root), home: home}
	for _, p := range append([]string{root}, protected...) {
		g.protected = append(g.protected, canonical(p))
	}
	return g
}

// Guard returns the guard of an agent working in wt: the main checkout,
// the git directory and every other worktree of the repository are
// protected; home expands "~" in commands (default: $HOME).
func (m *Manager) Guard(ctx context.Context, wt *Worktree, home string) (*Guard, error) {
	entries, err := m.list(ctx)
	if err != nil {
		return nil, err
	}
	protected := []string{m.common}
	for _, e := range entries {
		protected = append(protected, e.Path)
	}
	return NewGuard(wt.Path, m.root, home, protected...), nil
}

// Worktree returns the path of the worktree the guard confines to.
func (g *Guard) Worktree() string { return g.worktree }

// Root returns the repository root the guard protects.
func (g *Guard) Root() string { return g.root }

// CheckWrite implements tool.WriteGuard.
func (g *Guard) CheckWrite(path string) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("%w: %q is relative; tools must pass absolute paths", ErrOutsideWorktree, path)
	}
	real, err := resolvePath(path)
	if err != nil {
		return fmt.Errorf("%w: cannot resolve %s: %v", ErrOutsideWorktree, path, err)
	}
	if within(real, g.allowed) {
		return nil
	}
	for _, p := range g.protected {
		if within(real, p) {
			via := ""
			if real != filepath.Clean(path) {
				via = " (it resolves to " + real + ")"
			}
			return fmt.Errorf("%w: %s%s is inside %s, but this agent is isolated in the worktree %s; write inside the worktree instead", ErrOutsideWorktree, path, via, p, g.allowed)
		}
	}
	return nil
}

// within reports whether p is dir or below it. Both are clean and absolute.
// On macOS and Windows, whose file systems usually ignore case, so does the
// comparison.
func within(p, dir string) bool {
	if runtime.GOOS == "darwin" || runtime.GOOS == "windows" {
		p, dir = strings.ToLower(p), strings.ToLower(dir)
	}
	if p == dir {
		return true
	}
	if !strings.HasSuffix(dir, string(filepath.Separator)) {
		dir += string(filepath.Separator)
	}
	return strings.HasPrefix(p, dir)
}

// resolvePath resolves an absolute path the way the kernel would while
// creating it: component by component, following symlinks (also dangling
// ones, whose target a write would create) and applying ".." to the
// resolved prefix, not lexically. Components that do not exist yet are
// taken as they are.
func resolvePath(path string) (string, error) {
	vol := filepath.VolumeName(path)
	root := vol + string(filepath.Separator)
	resolved := root
	pending := splitPath(path[len(vol):])
	for hops := 0; len(pending) > 0; {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			resolved = filepath.Dir(resolved)
			continue
		}
		next := filepath.Join(resolved, c)
		if permission.ProcessPath(next) {
			return "", fmt.Errorf("%s goes through a process's /proc entry, which names what the process opening it sees", path)
		}
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			resolved = next
			continue
		case err != nil:
			return "", err
		case fi.Mode()&fs.ModeSymlink == 0:
			resolved = next
			continue
		}
		if hops++; hops > 255 {
			return "", fmt.Errorf("too many levels of symbolic links at %s", next)
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			tvol := filepath.VolumeName(target)
			resolved = tvol + string(filepath.Separator)
			target = target[len(tvol):]
		}
		pending = append(splitPath(target), pending...)
	}
	return resolved, nil
}

func splitPath(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r < utf8.RuneSelf && os.IsPathSeparator(uint8(r)) })
}

// CheckCommand vets a shell command line that is about to run in dir. It
// returns an error wrapping worktree.ErrOutsideWorktree, written for the
// model, when the line aims a write at the main checkout or when the
// analysis cannot tell where it writes.
func (g *Guard) CheckCommand(command, dir string) error {
	err := g.check(command, dir)
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %v. This agent is isolated in the worktree %s, a full checkout of the same repository: run the command there, on the worktree's copies of the files", ErrOutsideWorktree, err, g.worktree)
}

// checkPath refuses a path a writing command names: inside a protected
// tree, or a directory that holds the repository root.
func (g *Guard) checkPath(p string) error {
	if err := g.CheckWrite(p); err != nil {
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
