package search

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/cohort-dev/cohort/tool"
)

// GlobConfig configures Glob. Zero values take the defaults.
type GlobConfig struct {
	// MaxResults caps the listed files (100).
	MaxResults int
}

// NewGlob returns the Glob tool. Globbing changes nothing, so its calls are
// read-only and concurrency-safe. Safe for concurrent use.
func NewGlob(cfg GlobConfig) tool.Tool {
	if cfg.MaxResults <= 0 {
		cfg.MaxResults = 100
	}
	g := &globber{cfg: cfg}
	return tool.New(tool.Spec[globInput]{Name: "Glob", Description: globDescription, Input: globSchema,
		Traits: tool.Traits{ReadOnly: true, ConcurrencySafe: true}, Run: g.run})
}

// globber is Glob's state: its settings.
type globber struct{ cfg GlobConfig }

// errEnough stops a walk that has collected maxCollected matches.
var errEnough = errors.New("enough matches")

// maxCollected bounds how many matches Glob gathers before sorting.
const maxCollected = 1_000_000

const globDescription = `Finds files by name with a glob pattern, in any size of codebase.

- Patterns: "**/*.go" matches Go files at any depth, "src/**/*.{ts,tsx}" TypeScript files under src, "*.md" Markdown files in the directory itself. * and ? do not cross /, ** spans directories, {a,b} is an alternation, [abc] a character class.
- path is the directory to search in (default: the working directory). Leave it out rather than passing "." or "undefined".
- Returns absolute paths of matching files, most recently modified first, at most 100; the .git directory is never searched.
- To search file contents, use Grep. For open-ended searches that need several rounds of globbing and grepping, consider delegating to an agent.
- You can run several searches in parallel by making multiple calls at once.`

var globSchema = tool.Object(
	tool.Required("pattern", tool.String("The glob pattern to match file paths against.")),
	tool.Optional("path", tool.String("The directory to search in (default: the working directory).")),
)

type globInput struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path"`
}

func (g *globber) run(ctx context.Context, env *tool.Env, in globInput) (tool.Result, error) {
	root, pattern, err := globRoot(env, in.Path, in.Pattern)
	if err != nil {
		return tool.Result{}, err
	}
	if env.DeniedRead(root) {
		return tool.Result{}, tool.Failf("%s is covered by a Read deny rule (or cannot be checked against one); it cannot be searched", root)
	}
	start := time.Now()
	type match struct {
		path  string
		mtime time.Time
	}
	var matches []match
	more := false
	err = doublestar.GlobWalk(noGitFS{os.DirFS(root)}, pattern, func(p string, d fs.DirEntry) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if len(matches) == maxCollected {
			more = true
			return errEnough
		}
		m := match{path: filepath.Join(root, filepath.FromSlash(p))}
		if env.DeniedRead(m.path) {
			return nil // a Read deny rule covers it: not even its name is shown
		}
		if info, err := d.Info(); err == nil {
			m.mtime = info.ModTime()
		}
		matches = append(matches, m)
		return nil
	}, doublestar.WithFilesOnly(), doublestar.WithNoFollow())
	if err != nil && !errors.Is(err, errEnough) {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		return tool.Errorf("glob %q in %s failed: %v", pattern, root, err), nil
	}
	resp := &GlobResponse{Filenames: []string{}, DurationMs: time.Since(start).Milliseconds()}
	if len(matches) == 0 {
		res := tool.Text("No files found")
		res.Response = resp
		return res, nil
	}
	slices.SortFunc(matches, func(a, b match) int {
		if c := b.mtime.Compare(a.mtime); c != 0 {
			return c
		}
		return strings.Compare(a.path, b.path)
	})
	var b strings.Builder
	for i, m := range matches[:min(len(matches), g.cfg.MaxResults)] {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(m.path)
		resp.Filenames = append(resp.Filenames, m.path)
	}
	resp.NumFiles, resp.Truncated = len(resp.Filenames), len(matches) > g.cfg.MaxResults || more
	if resp.Truncated {
		total := fmt.Sprint(len(matches))
		if more {
			total = "more than " + total
		}
		fmt.Fprintf(&b, "\n[Showing the %d most recently modified of %s files. Use a more specific pattern or path to see the rest.]", g.cfg.MaxResults, total)
	}
	res := tool.Text(b.String())
	res.Response = resp
	return res, nil
}

// GlobResponse is the structured result of a Glob call
// (tool.Result.Response), in Claude Code's shape.
type GlobResponse struct {
	Filenames  []string `json:"filenames"`
	DurationMs int64    `json:"durationMs"`
	NumFiles   int      `json:"numFiles"`
	Truncated  bool     `json:"truncated"`
}

// globRoot resolves the directory to walk and the pattern relative to it.
// An absolute pattern brings its own root (its part before any wildcard).
func globRoot(env *tool.Env, dir, pattern string) (string, string, error) {
	if pattern == "" {
		return "", "", tool.Failf("pattern is empty; pass a glob such as \"**/*.go\"")
	}
	root, err := tool.ResolvePath(env, dir)
	if err != nil {
		return "", "", err
	}
	if strings.HasPrefix(pattern, "/") {
		base, rest := doublestar.SplitPattern(pattern)
		root, pattern = filepath.Clean(base), rest
	}
	pattern = path.Clean(pattern)
	if !doublestar.ValidatePattern(pattern) {
		return "", "", tool.Failf("invalid glob pattern %q (check brackets and braces)", pattern)
	}
	info, err := os.Stat(root)
	if err != nil {
		return "", "", tool.Failf("directory %s does not exist or cannot be read: %v", root, unwrapPath(err))
	}
	if !info.IsDir() {
		return "", "", tool.Failf("%s is not a directory; pass a directory as path", root)
	}
	return root, pattern, nil
}

// noGitFS hides every .git directory from the walk.
type noGitFS struct{ fsys fs.FS }

func inGit(name string) bool {
	return name == ".git" || strings.HasPrefix(name, ".git/") || strings.Contains(name, "/.git/") || strings.HasSuffix(name, "/.git")
}

func (n noGitFS) Open(name string) (fs.File, error) {
	if inGit(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return n.fsys.Open(name)
}

func (n noGitFS) Stat(name string) (fs.FileInfo, error) {
	if inGit(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
	}
	return fs.Stat(n.fsys, name)
}

func (n noGitFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if inGit(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	entries, err := fs.ReadDir(n.fsys, name)
	return slices.DeleteFunc(entries, func(e fs.DirEntry) bool { return e.Name() == ".git" }), err
}
