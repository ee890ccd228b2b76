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

// Guard is the tool.WriteGuard of an agent isolated in a worktree. It
// refuses a write whose target — after resolving "..", and symlinks in every
// existing component, dangling ones included — lies inside a protected
// tree (the main checkout, git's directory, the repository's other
// worktrees) but not inside the agent's own worktree. Writes outside the
// repository entirely (temporary files, the memory directory, ...) are
// allowed: isolation protects the checkout, it is not a sandbox. Relative
// paths and paths that cannot be resolved are refused (fail closed).
//
// The set of protected trees is fixed when the Guard is made. A Guard is
// immutable and safe for concurrent use.
type Guard struct {
	allowed   string
	protected []string
}

var _ tool.WriteGuard = (*Guard)(nil)

// NewGuard returns a Guard that allows writes inside allowed and refuses
// them inside any of protected otherwise. All paths must be absolute.
func NewGuard(allowed string, protected ...string) *Guard {
	g := &Guard{allowed: canonical(allowed)}
	for _, p := range protected {
		g.protected = append(g.protected, canonical(p))
	}
	return g
}

// Guard returns the write guard for an agent working in wt: the main
// checkout, the git directory and every other worktree of the repository
// are protected.
func (m *Manager) Guard(ctx context.Context, wt *Worktree) (*Guard, error) {
	entries, err := m.list(ctx)
	if err != nil {
		return nil, err
	}
	protected := []string{m.root, m.common}
	for _, e := range entries {
		protected = append(protected, e.Path)
	}
	return NewGuard(wt.Path, protected...), nil
}

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
