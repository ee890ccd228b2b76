package search

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/cohort-dev/cohort/tool"
)

// LSConfig configures LS. Zero values take the defaults.
type LSConfig struct {
	// MaxEntries caps the listed files and directories (1000).
	MaxEntries int
}

// NewLS returns the LS tool: a directory's tree (Claude Code agent files
// still list it). Listing changes nothing, so its calls are read-only and
// concurrency-safe. Safe for concurrent use.
func NewLS(cfg LSConfig) tool.Tool {
	if cfg.MaxEntries <= 0 {
		cfg.MaxEntries = 1000
	}
	l := &lister{cfg: cfg}
	return tool.New(tool.Spec[lsInput]{Name: "LS", Description: lsDescription, Input: lsSchema,
		Traits: tool.Traits{ReadOnly: true, ConcurrencySafe: true}, Run: l.run})
}

// lister is LS's state: its settings.
type lister struct{ cfg LSConfig }

const lsDescription = `Lists the files and directories under a directory, as an indented tree.

- path must be an absolute path to a directory.
- ignore takes glob patterns of names or relative paths to leave out (for example "*.log" or "build/**").
- Hidden entries (names starting with a dot) and __pycache__ directories are not listed; at most 1000 entries are shown.
- Prefer Glob when you know the names you are looking for, and Grep to search contents.`

var lsSchema = tool.Object(
	tool.Required("path", tool.String("The absolute path of the directory to list.")),
	tool.Optional("ignore", tool.Array("Glob patterns of entries to leave out.", tool.String("A glob pattern."))),
)

// errListed stops a walk that has listed MaxEntries entries.
var errListed = errors.New("listing full")

type lsInput struct {
	Path   string   `json:"path"`
	Ignore []string `json:"ignore"`
}

func (l *lister) run(ctx context.Context, env *tool.Env, in lsInput) (tool.Result, error) {
	root, err := tool.AbsPath(env, "path", in.Path)
	if err != nil {
		// LS's own wording: the path is a directory's.
		return tool.Errorf("path %q is not absolute; pass the absolute path of the directory to list", in.Path), nil
	}
	info, err := os.Stat(root)
	switch {
	case env.DeniedRead(root):
		return tool.Errorf("%s is covered by a Read deny rule (or cannot be checked against one); it cannot be listed", root), nil
	case err != nil:
		return tool.Errorf("cannot list %s: %v", root, unwrapPath(err)), nil
	case !info.IsDir():
		return tool.Errorf("%s is a file, not a directory; use Read to see it", root), nil
	}
	for _, p := range in.Ignore {
		if !doublestar.ValidatePattern(p) {
			return tool.Errorf("ignore pattern %q is not a valid glob", p), nil
		}
	}
	// The listing walks the directory that was opened, through os.Root, and
	// judges names by where that directory really is: a link swapped in
	// for it, or for anything below it, after the check above leads
	// nowhere else.
	dir, err := os.OpenRoot(root)
	if err != nil {
		return tool.Errorf("cannot list %s: %v", root, unwrapPath(err)), nil
	}
	defer dir.Close()
	real, err := rootPath(dir)
	if err != nil || env.DeniedRead(real) {
		return tool.Errorf("%s is covered by a Read deny rule (or cannot be checked against one); it cannot be listed", root), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "- %s/\n", root)
	n := 0
	err = fs.WalkDir(dir.FS(), ".", func(rel string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if rel == "." || err != nil {
			return nil // unreadable entries are left out
		}
		rel = filepath.FromSlash(rel)
		if skipEntry(d, rel, in.Ignore) || env.DeniedRead(filepath.Join(real, rel)) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if n == l.cfg.MaxEntries {
			return errListed
		}
		n++
		depth := strings.Count(filepath.ToSlash(rel), "/") + 1
		name := d.Name()
		if d.IsDir() {
			name += "/"
		}
		fmt.Fprintf(&b, "%s- %s\n", strings.Repeat("  ", depth), name)
		return nil
	})
	switch {
	case errors.Is(err, errListed):
		fmt.Fprintf(&b, "[Stopped after %d entries; list a subdirectory, or use Glob with a pattern, to see the rest.]\n", l.cfg.MaxEntries)
	case err != nil && ctx.Err() != nil:
		return tool.Result{}, ctx.Err()
	case n == 0:
		b.WriteString("  (empty)\n")
	}
	return tool.Text(strings.TrimSuffix(b.String(), "\n")), nil
}

// rootPath is where an opened root really is (/proc/self/fd on Linux).
func rootPath(r *os.Root) (string, error) {
	f, err := r.Open(".")
	if err != nil {
		return "", err
	}
	defer f.Close()
	if p, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd())); err == nil {
		return p, nil
	}
	return filepath.Clean(r.Name()), nil
}

// skipEntry reports whether an entry is left out: hidden names,
// __pycache__, and the ignore patterns (matched against the name and the
// path relative to the listed directory).
func skipEntry(d fs.DirEntry, rel string, ignore []string) bool {
	name := d.Name()
	if strings.HasPrefix(name, ".") || (d.IsDir() && name == "__pycache__") {
		return true
	}
	rel = filepath.ToSlash(rel)
	return slices.ContainsFunc(ignore, func(p string) bool {
		return doublestar.MatchUnvalidated(p, name) || doublestar.MatchUnvalidated(p, rel)
	})
}
