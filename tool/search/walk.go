package search

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cohort-dev/cohort/internal/ownread"
)

// walker lists the files ripgrep would search under a root, applying its
// default filters in its order of precedence: --glob overrides, then ignore
// files (.rgignore over .ignore over .gitignore over .git/info/exclude, the
// nearest directory first within each kind), then the file type, then
// hidden names. Explicitly given roots are never filtered. Symbolic links
// are not followed. Not safe for concurrent use.
type walker struct {
	root  string
	over  overrides
	types *typeMatcher
	dirs  map[string]*dirIgnores
}

// dirIgnores are the ignore rules found in one directory.
type dirIgnores struct {
	custom, dot, git, exclude rules
	hasGit                    bool
}

func newWalker(q *query) (*walker, error) {
	over, err := newOverrides(q.globs)
	if err != nil {
		return nil, err
	}
	types, err := newTypeMatcher(q.fileType)
	if err != nil {
		return nil, err
	}
	return &walker{root: q.root, over: over, types: types, dirs: map[string]*dirIgnores{}}, nil
}

// files calls fn with each file to search, in ripgrep's --sort=path order
// (names sorted byte-wise within each directory, depth first). fn returns
// false to stop.
func (w *walker) files(ctx context.Context, fn func(path string) bool) error {
	return filepath.WalkDir(w.root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == w.root {
				return err
			}
			return nil // unreadable entries are skipped, as rg --no-messages does
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if path == w.root {
			if d.IsDir() {
				return nil
			}
			if !fn(path) {
				return filepath.SkipAll
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		isDir := d.IsDir()
		if !w.include(path, isDir) {
			if isDir {
				return filepath.SkipDir
			}
			return nil
		}
		if isDir || !d.Type().IsRegular() {
			return nil
		}
		if !fn(path) {
			return filepath.SkipAll
		}
		return nil
	})
}

// include decides whether a path below the root is searched (or, for a
// directory, entered).
func (w *walker) include(path string, isDir bool) bool {
	rel := filepath.ToSlash(strings.TrimPrefix(path, w.root+string(filepath.Separator)))
	if w.root == string(filepath.Separator) {
		rel = filepath.ToSlash(strings.TrimPrefix(path, w.root))
	}
	switch w.over.match(rel, isDir) {
	case ignored:
		return false
	case whitelisted:
		return true
	}
	white := false
	switch w.ignoreDecision(path, isDir) {
	case ignored:
		return false
	case whitelisted:
		white = true
	}
	if w.types != nil && !isDir {
		if !w.types.match(path) {
			return false
		}
		white = true
	}
	return white || !strings.HasPrefix(filepath.Base(path), ".")
}

// ignoreDecision consults the ignore files of every directory above path.
func (w *walker) ignoreDecision(path string, isDir bool) decision {
	var chain []string
	for d := filepath.Dir(path); ; d = filepath.Dir(d) {
		chain = append(chain, d)
		if d == filepath.Dir(d) {
			break
		}
	}
	anyGit := false
	for _, d := range chain {
		if w.load(d).hasGit {
			anyGit = true
			break
		}
	}
	var custom, dot, git, exclude decision
	sawGit := false
	for _, d := range chain {
		di := w.load(d)
		rel := filepath.ToSlash(strings.TrimPrefix(strings.TrimPrefix(path, d), string(filepath.Separator)))
		if custom == undecided {
			custom = di.custom.match(rel, isDir)
		}
		if dot == undecided {
			dot = di.dot.match(rel, isDir)
		}
		if anyGit && !sawGit {
			if git == undecided {
				git = di.git.match(rel, isDir)
			}
			if exclude == undecided {
				exclude = di.exclude.match(rel, isDir)
			}
		}
		sawGit = sawGit || di.hasGit
	}
	for _, d := range []decision{custom, dot, git, exclude} {
		if d != undecided {
			return d
		}
	}
	return undecided
}

// load reads (once) the ignore files of dir.
func (w *walker) load(dir string) *dirIgnores {
	if di, ok := w.dirs[dir]; ok {
		return di
	}
	read := func(name string) rules {
		data, err := ownread.Config(filepath.Join(dir, name), 0) // a FIFO is no ignore file
		if err != nil {
			return nil
		}
		return parseRules(data)
	}
	di := &dirIgnores{custom: read(".rgignore"), dot: read(".ignore"), git: read(".gitignore")}
	if info, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
		di.hasGit = true
		if info.IsDir() {
			di.exclude = read(filepath.Join(".git", "info", "exclude"))
		}
	}
	w.dirs[dir] = di
	return di
}
