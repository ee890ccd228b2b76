package permission

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
)

// ReadDenials is what the Read deny rules cover on disk at one moment, for
// a sandbox that hides those paths from commands: the permission check
// matches a pattern against every path a call names, but a sandbox can
// only hide what exists when it is set up.
type ReadDenials struct {
	// Paths exist and are covered by a deny rule; a directory stands for
	// everything below it. Absolute and clean, in rule order.
	Paths []string
	// Uncovered says, in words, what hiding Paths leaves readable: a
	// pattern's matches that appear later, a literal path that does not
	// exist yet, a search cut short by the limits.
	Uncovered []string
}

// DenialLimits bound the search for paths a Read deny pattern matches.
type DenialLimits struct {
	// Entries is how many directory entries the search visits in all;
	// Paths is how many matches it returns.
	Entries, Paths int
}

// DefaultDenialLimits keep the search to a fraction of a second on a
// large checkout, and the hidden paths (a mount each) far below the
// kernel's mount limit.
var DefaultDenialLimits = DenialLimits{Entries: 200_000, Paths: 2_000}

var errDenialLimit = errors.New("limit reached")

// ReadDenials lists the paths that Read deny rules cover now, for an agent
// whose working directory is cwd ("" for the session's). A literal rule
// ("./secrets/**", "//etc/shadow") names its path; a pattern ("**/*.pem",
// "*.env") is matched against the tree below its fixed prefix, without
// entering .git directories the pattern does not name. Safe for
// concurrent use; ctx stops the search (what was found is returned, and
// the rest reported as uncovered).
func (c *Checker) ReadDenials(ctx context.Context, cwd string, lim DenialLimits) ReadDenials {
	e := &evaluation{sh: c.sh, rules: c.sh.snapshot(), cwd: c.sh.cwd, bases: map[string]string{}}
	if cwd != "" {
		e.cwd = filepath.Clean(cwd)
	}
	d := &denialSearch{ctx: ctx, lim: lim, seen: map[string]bool{}}
	for _, r := range e.rulesFor(Deny, func(r *Rule) bool { return r.coversTool("Read") }) {
		switch {
		case r.Invalid != "" || (r.path == nil && r.Specifier != ""):
			d.note("%s: a rule that did not parse denies every read to the permission check; the sandbox cannot hide everything", r.where())
		case r.path == nil:
			d.note("%s: denies every read to the permission check; the sandbox cannot hide everything", r.where())
		default:
			walked := map[string]bool{} // by resolved form: a base and its real path are one tree
			for _, b := range e.rootsOf(r, true) {
				// The agents' worktrees hold copies of what the rule covers
				// in the project (pathMatch).
				for _, b := range append([]string{b}, worktreesOf(b, r)...) {
					res, err := resolvePath(b)
					if err != nil {
						res = b
					}
					if !walked[res] {
						walked[res] = true
						d.rule(r, b)
					}
				}
			}
		}
	}
	return d.out
}

// worktreesOf lists the agents' worktrees under base (WorktreesDir) for
// a rule relative to the project, none for one anchored at / or ~.
func worktreesOf(base string, r *Rule) []string {
	if r.path.anchor == anchorAbs || r.path.anchor == anchorHome {
		return nil
	}
	dir := filepath.Join(base, WorktreesDir)
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, en := range entries {
		if en.IsDir() {
			out = append(out, filepath.Join(dir, en.Name()))
		}
	}
	return out
}

// denialSearch is one ReadDenials call.
type denialSearch struct {
	ctx     context.Context
	lim     DenialLimits
	entries int
	seen    map[string]bool
	out     ReadDenials
	stopped bool // a limit was reached: every later pattern is uncovered
}

func (d *denialSearch) note(format string, args ...any) {
	d.out.Uncovered = append(d.out.Uncovered, fmt.Sprintf(format, args...)+" (the permission check still applies)")
}

func (d *denialSearch) add(p string) error {
	if d.seen[p] {
		return nil
	}
	if len(d.out.Paths) >= d.lim.Paths {
		return errDenialLimit
	}
	d.seen[p] = true
	d.out.Paths = append(d.out.Paths, p)
	return nil
}

// rule finds what r covers below base.
func (d *denialSearch) rule(r *Rule, base string) {
	p := r.path
	pat := p.absPattern(base)
	if p.pattern == "" || !hasMeta(p.pattern) && !p.floating {
		path := filepath.Clean(filepath.Join(base, p.pattern))
		fi, err := os.Lstat(path)
		switch {
		case err != nil:
			d.note("%s: %s does not exist, so it is not hidden; if it appears during the session commands can read it", r.where(), path)
		case p.dirOnly && !fi.IsDir():
		default:
			if d.add(path) != nil {
				d.note("%s: %s is not hidden: more than %d paths are denied", r.where(), path, d.lim.Paths)
			}
		}
		return
	}
	root := fixedPrefix(base, p)
	if _, err := os.Lstat(root); err != nil {
		d.note("%s: %s does not exist, so nothing is hidden there; what it matches there later in the session is readable", r.where(), root)
		return
	}
	if d.stopped {
		d.note("%s: nothing it matches under %s is hidden: the search stopped at its limit", r.where(), root)
		return
	}
	whole := false // the walk's root matched: everything below is hidden, now and later
	err := filepath.WalkDir(root, func(path string, de fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable or vanished: nothing to hide there
		}
		if d.entries++; d.entries > d.lim.Entries {
			return errDenialLimit
		}
		if d.entries%1024 == 0 && d.ctx.Err() != nil {
			return d.ctx.Err()
		}
		if !(p.dirOnly && !de.IsDir()) {
			if ok, _ := doublestar.Match(pat, path); ok {
				if err := d.add(path); err != nil {
					return err
				}
				whole = whole || path == root
				if de.IsDir() {
					return fs.SkipDir
				}
				return nil
			}
		}
		if de.IsDir() && de.Name() == ".git" && path != root {
			return fs.SkipDir // git's internals: a pattern that means them names .git
		}
		return nil
	})
	switch {
	case errors.Is(err, errDenialLimit):
		d.stopped = true
		d.note("%s: the search for what it matches under %s stopped at its limit (%d entries, %d paths); the matches it did not reach are not hidden", r.where(), root, d.lim.Entries, d.lim.Paths)
	case err != nil:
		d.note("%s: the search for what it matches under %s was cut short (%v); the matches it did not reach are not hidden", r.where(), root, err)
	case !whole:
		d.note("%s: what it matches now under %s is hidden; files that match it later in the session are readable", r.where(), root)
	}
}

// fixedPrefix is the directory a pattern's matches must lie below: base
// and the pattern's leading components that hold no glob characters.
func fixedPrefix(base string, p *pathPattern) string {
	root := filepath.Clean(base)
	if p.floating {
		return root
	}
	for _, comp := range strings.Split(p.pattern, "/") {
		if hasMeta(comp) {
			break
		}
		root = filepath.Join(root, comp)
	}
	return root
}

func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[{\`) }

// ReadDenyRoots lists, for every Read deny rule that names paths, the
// directory its matches must lie below (its base and the pattern's
// leading components without glob characters), absolute and clean,
// whether or not anything exists there now: a rule can name a file that
// is gone from the tree and kept only in a repository's history, so the
// sandbox hides the stores that hold these directories (package
// internal/assemble, gitstore_rules.go).
func (c *Checker) ReadDenyRoots() []string {
	e := &evaluation{sh: c.sh, rules: c.sh.snapshot(), cwd: c.sh.cwd, bases: map[string]string{}}
	var out []string
	for _, r := range e.rulesFor(Deny, func(r *Rule) bool { return r.coversTool("Read") }) {
		if r.Invalid != "" || r.path == nil {
			continue
		}
		for _, b := range e.rootsOf(r, true) {
			root := fixedPrefix(b, r.path)
			if !slices.Contains(out, root) {
				out = append(out, root)
			}
		}
	}
	return out
}
