package agentdef

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cohort-dev/cohort/flags"
	"github.com/cohort-dev/cohort/internal/configtrust"
	"github.com/cohort-dev/cohort/internal/ownread"
)

// LoadConfig says where Load looks. Load reads no environment variables and
// no process-wide state: the caller resolves every path.
type LoadConfig struct {
	// Cwd is the working directory; the project root is found from it when
	// ProjectRoot is empty.
	Cwd string
	// ProjectRoot holds .cohort/agents and .claude/agents. Empty means the
	// nearest ancestor of Cwd (itself included) holding a .git entry, or Cwd
	// outside a repository; with Cwd empty too, no project directory is read.
	ProjectRoot string
	// CohortHome holds the user's agents/ directory; empty skips it.
	CohortHome string
	// Home is the user's home directory, for ~/.claude/agents; empty skips it.
	Home string
	// ClaudeCompat also reads the .claude/agents directories.
	ClaudeCompat bool
	// CLIJSON is the argument of --agents, if any.
	CLIJSON string
	// KnownTools are the tool names that exist; definitions naming others
	// have those names dropped with a warning. Nil skips the check.
	KnownTools []string
	// Flags gate the built-ins; nil means the defaults.
	Flags *flags.Set
	// Trust, when set, is the record of where agents' commands could
	// write: a definition there is loaded only as a person approved it
	// (internal/configtrust), else it is a warning.
	Trust *configtrust.Book
}

// dirSpec is one agents directory and the source its files get.
type dirSpec struct {
	path   string
	source Source
	base   string // the directory holding .claude or .cohort (or COHORT_HOME)
}

// Dirs returns the agents directories Load reads, lowest precedence first.
func (cfg LoadConfig) Dirs() []string {
	var out []string
	for _, d := range cfg.dirs() {
		out = append(out, d.path)
	}
	return out
}

func (cfg LoadConfig) dirs() []dirSpec {
	var out []dirSpec
	add := func(base string, level Level, claude bool, elem ...string) {
		if base == "" || (claude && !cfg.ClaudeCompat) {
			return
		}
		out = append(out, dirSpec{filepath.Join(append([]string{base}, elem...)...), Source{Level: level, Claude: claude}, base})
	}
	add(cfg.Home, LevelUser, true, ".claude", "agents")
	add(cfg.CohortHome, LevelUser, false, "agents")
	root := cfg.ProjectRoot
	if root == "" {
		root = ProjectRoot(cfg.Cwd)
	}
	add(root, LevelProject, true, ".claude", "agents")
	add(root, LevelProject, false, ".cohort", "agents")
	return out
}

// ProjectRoot returns the nearest ancestor of cwd (cwd included) that holds a
// .git entry (a directory, or a file in a linked worktree), or cwd when
// there is none.
func ProjectRoot(cwd string) string {
	if cwd == "" {
		return ""
	}
	if abs, err := filepath.Abs(cwd); err == nil {
		cwd = abs
	}
	for dir := filepath.Clean(cwd); ; {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return filepath.Clean(cwd)
		}
		dir = parent
	}
}

// Load reads every definition: the built-ins the flags enable, then the user,
// project and --agents definitions (see LoadConfig and the package doc for
// the order). It always returns a usable catalog; errs lists the files or
// entries that could not be loaded (each a *ParseError naming file and line,
// or an I/O error naming the path), and warnings the problems that did not
// stop a definition from loading.
func Load(ctx context.Context, cfg LoadConfig) (cat *Catalog, warnings []Warning, errs []error) {
	defs := BuiltIns(cfg.Flags)
	seen := map[string]bool{}
	for _, dir := range cfg.dirs() {
		key := dir.path
		if resolved, err := filepath.EvalSymlinks(dir.path); err == nil {
			key = resolved
		}
		if seen[key] {
			continue // e.g. the project root is the home directory
		}
		seen[key] = true
		d, w, e := loadDir(ctx, dir, cfg.KnownTools, cfg.Trust)
		defs, warnings, errs = append(defs, d...), append(warnings, w...), append(errs, e...)
	}
	d, w, e := ParseCLI(cfg.CLIJSON, cfg.KnownTools)
	defs, warnings, errs = append(defs, d...), append(warnings, w...), append(errs, e...)
	cat = NewCatalog(defs)
	for _, e := range cat.All() {
		if !e.Active && e.OverriddenBy.rank() == e.Definition.Source.rank() {
			warnings = append(warnings, Warning{Path: e.Definition.Source.Path, Line: 1,
				Message: fmt.Sprintf("agent %q is also defined in %s, which is used (the first in path order); this one is ignored", e.Definition.Name, e.OverriddenBy.Path)})
		}
	}
	return cat, warnings, errs
}

// loadDir reads every *.md file under dir, recursively, in lexical order.
// Hidden files and directories are skipped, and symbolic links to
// directories are not followed (links to files are).
func loadDir(ctx context.Context, dir dirSpec, known []string, trust *configtrust.Book) (defs []*Definition, warns []Warning, errs []error) {
	root, err := filepath.EvalSymlinks(dir.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, []error{fmt.Errorf("agents directory %s: %w", dir.path, err)}
	}
	walkErr := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		shown := dir.path
		if rel, relErr := filepath.Rel(root, p); relErr == nil && rel != "." {
			shown = filepath.Join(dir.path, rel)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("agents directory %s: %w", shown, err))
			return nil // WalkDir skips what it could not read
		}
		if p != root && strings.HasPrefix(e.Name(), ".") {
			if e.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if e.IsDir() || !strings.EqualFold(filepath.Ext(e.Name()), ".md") {
			return nil
		}
		d, w, err := loadFile(p, shown, known, func(data []byte) *Warning {
			if v := trust.Check(dir.base, shown, data); v != nil {
				return &Warning{Path: shown, Message: "this agent definition is not loaded: it " + v.Why()}
			}
			return nil
		})
		warns = append(warns, w...)
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		if d != nil {
			d.Source = dir.source
			d.Source.Path = shown
			defs = append(defs, d)
		}
		return nil
	})
	if walkErr != nil {
		errs = append(errs, fmt.Errorf("agents directory %s: %w", dir.path, walkErr))
	}
	return defs, warns, errs
}

// loadFile reads and parses one file. Anything but a regular file (or a
// link to one) yields nothing: opening a FIFO could block.
func loadFile(p, shown string, known []string, vet func([]byte) *Warning) (*Definition, []Warning, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, nil, fmt.Errorf("agent file %s: %w", shown, err)
	}
	if !info.Mode().IsRegular() {
		return nil, nil, nil
	}
	// Opened without blocking and judged as opened: a FIFO swapped in
	// after the Stat must not hang the start.
	data, err := ownread.Config(p, MaxFileSize+1)
	if err != nil {
		return nil, nil, fmt.Errorf("agent file %s: %w", shown, err)
	}
	if w := vet(data); w != nil {
		return nil, []Warning{*w}, nil
	}
	return Parse(shown, data, known)
}
