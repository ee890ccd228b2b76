package configtrust

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/internal/atomicfile"
	"github.com/cohort-dev/cohort/internal/filelock"
)

// Root is a tree a session's commands could write.
type Root struct {
	Path string `json:"path"`
	// Frozen says the sandbox keeps the root's own .cohort, .claude and
	// .mcp.json read-only (a working directory's top).
	Frozen bool `json:"frozen,omitempty"`
	// Since is when a session first made it writable.
	Since time.Time `json:"since"`
}

type rootsFile struct {
	Roots []Root `json:"roots"`
}

type approval struct {
	SHA256 string    `json:"sha256"`
	At     time.Time `json:"at"`
}

type approvedFile struct {
	Files map[string]approval `json:"files"`
}

// Dir is the registry's directory under home ($COHORT_HOME).
func Dir(home string) string { return filepath.Join(home, "trust") }

// UserDir is the user's own registry, outside every COHORT_HOME:
// $XDG_STATE_HOME/cohort/trust, or ~/.local/state/cohort/trust when
// XDG_STATE_HOME is unset or not an absolute path (as the XDG base
// directory specification says). "" when HOME is not an absolute path
// either.
func UserDir(getenv func(string) string) string {
	if s := getenv("XDG_STATE_HOME"); s != "" && filepath.IsAbs(s) {
		return filepath.Join(filepath.Clean(s), "cohort", "trust")
	}
	if h := getenv("HOME"); h != "" && filepath.IsAbs(h) {
		return filepath.Join(filepath.Clean(h), ".local", "state", "cohort", "trust")
	}
	return ""
}

// Places are the directories of a session's registry: the user's
// (UserDir) and its COHORT_HOME's. Every session writes to each and
// reads them all, so which COHORT_HOME it runs with does not change
// what it trusts (see "Where the record is kept").
type Places []string

// At is the registry of a session whose COHORT_HOME is cohortHome ("":
// none) in the environment getenv reads.
func At(cohortHome string, getenv func(string) string) Places {
	var out Places
	for _, d := range []string{UserDir(getenv), cohortHome} {
		if d == "" {
			continue
		}
		if d == cohortHome {
			d = Dir(d)
		}
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// each runs fn on every directory of at and joins their errors: one
// that cannot be written leaves the others written.
func (at Places) each(fn func(dir string) error) error {
	var errs []error
	for _, d := range at {
		errs = append(errs, fn(d))
	}
	return errors.Join(errs...)
}

// resolve is path made absolute with its links resolved as far as they
// exist (a missing tail is kept as named).
func resolve(path string) string {
	path = filepath.Clean(path)
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	dir, base := filepath.Split(path)
	if dir == "" || filepath.Clean(dir) == path {
		return path
	}
	return filepath.Join(resolve(filepath.Clean(dir)), base)
}

// within reports whether p lies strictly inside dir.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// update runs fn on the decoded file name in the registry directory dir
// under its lock and writes the result back.
func update[T any](ctx context.Context, dir, name string, fn func(*T) bool) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("configtrust: %w", err)
	}
	lk, err := filelock.Lock(ctx, filepath.Join(dir, "lock"), filelock.Options{Create: true, Timeout: 10 * time.Second})
	if err != nil {
		return fmt.Errorf("configtrust: lock %s: %w", dir, err)
	}
	defer func() { _ = lk.Unlock() }()
	path := filepath.Join(dir, name)
	var v T
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("configtrust: %w", err)
	default:
		if err := json.Unmarshal(data, &v); err != nil {
			return fmt.Errorf("configtrust: %s is not valid JSON (%v); fix it or remove it", path, err)
		}
	}
	if !fn(&v) {
		return nil
	}
	out, err := json.MarshalIndent(&v, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(out, '\n'), 0o600)
}

// Record adds roots to every registry of at (resolved, each once; a root
// seen frozen and later open is kept open, the weaker).
func Record(ctx context.Context, at Places, roots []Root, now time.Time) error {
	return at.each(func(dir string) error { return record(ctx, dir, roots, now) })
}

func record(ctx context.Context, dir string, roots []Root, now time.Time) error {
	return update(ctx, dir, "roots.json", func(f *rootsFile) bool {
		changed := false
		for _, r := range roots {
			if r.Path == "" || !filepath.IsAbs(r.Path) {
				continue
			}
			p := resolve(r.Path)
			i := -1
			for j := range f.Roots {
				if f.Roots[j].Path == p {
					i = j
				}
			}
			switch {
			case i < 0:
				f.Roots = append(f.Roots, Root{Path: p, Frozen: r.Frozen, Since: now.UTC().Truncate(time.Second)})
				changed = true
			case f.Roots[i].Frozen && !r.Frozen:
				f.Roots[i].Frozen = false
				changed = true
			}
		}
		return changed
	})
}

// Approve records data as the approved content of file in every
// registry of at.
func Approve(ctx context.Context, at Places, file string, data []byte, now time.Time) error {
	return at.each(func(dir string) error {
		return update(ctx, dir, "approved.json", func(f *approvedFile) bool {
			if f.Files == nil {
				f.Files = map[string]approval{}
			}
			f.Files[resolve(file)] = approval{SHA256: digest(data), At: now.UTC().Truncate(time.Second)}
			return true
		})
	})
}

func digest(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// Book is the registry as read at a session's start. The zero Book (or a
// nil one) knows no root and trusts everything: for callers with no
// registry.
type Book struct {
	dirs     Places
	roots    []Root
	approved map[string]approval
	broken   string // why the registry could not be read; every dir is then writable
}

// Open reads the registries of at, as one: a root recorded in any is a
// root (open where any says so), a file's approval is the latest any
// records, except that a registry lying in a root whose top is not
// frozen (by the roots of them all) vouches for no file. It never fails: a registry
// that cannot be read makes a Book that treats every directory as
// model-writable.
func Open(at Places) *Book {
	b := &Book{dirs: at}
	approved := make([]map[string]approval, len(at))
	for i, dir := range at {
		var rf rootsFile
		var af approvedFile
		for _, f := range []struct {
			name string
			v    any
		}{{"roots.json", &rf}, {"approved.json", &af}} {
			path := filepath.Join(dir, f.name)
			data, err := os.ReadFile(path)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err == nil {
				err = json.Unmarshal(data, f.v)
			}
			if err != nil && b.broken == "" {
				b.broken = fmt.Sprintf("Cohort's record of where agents could write, %s, cannot be read (%v): fix it", path, err)
			}
		}
		b.addRoots(rf.Roots)
		approved[i] = af.Files
	}
	for i, files := range approved {
		if b.inOpenRoot(at[i]) {
			continue // an agent could have written these approvals
		}
		for file, a := range files {
			if b.approved == nil {
				b.approved = map[string]approval{}
			}
			if old, ok := b.approved[file]; !ok || a.At.After(old.At) {
				b.approved[file] = a
			}
		}
	}
	return b
}

// inOpenRoot reports whether dir lies in a root whose top is not frozen
// (the cache, sandbox.allowWrite): commands write all of it. A working
// directory holding it (a session started in the home, which holds
// ~/.local/state and ~/.cohort) does not count: every session binds the
// registries read-only there.
func (b *Book) inOpenRoot(dir string) bool {
	d := resolve(dir)
	return slices.ContainsFunc(b.roots, func(r Root) bool { return !r.Frozen && (d == r.Path || within(r.Path, d)) })
}

// addRoots merges roots read from one registry into b's.
func (b *Book) addRoots(roots []Root) {
	for _, r := range roots {
		i := slices.IndexFunc(b.roots, func(o Root) bool { return o.Path == r.Path })
		switch {
		case i < 0:
			b.roots = append(b.roots, r)
		default:
			b.roots[i].Frozen = b.roots[i].Frozen && r.Frozen
			if r.Since.Before(b.roots[i].Since) {
				b.roots[i].Since = r.Since
			}
		}
	}
}

// Verdict says why a file is not obeyed as written.
type Verdict struct {
	File string
	// Root is the recorded tree the file lies in, Since when a session
	// first made it writable.
	Root   string
	Since  time.Time
	frozen bool
	// top is set for a tracked file at a frozen root's top that
	// "appeared" (or changed) while a session could write the root, or
	// "changed" while one may be writing it still.
	top string
	// Broken is set when the registry could not be read.
	Broken string
}

// Why is the verdict in words, for a warning: where the file lies and
// what to do.
func (v *Verdict) Why() string {
	if v.Broken != "" {
		return v.Broken
	}
	switch v.top {
	case "appeared":
		return fmt.Sprintf("appeared or changed while a Cohort session could write %s (recorded %s): an agent may have written it; if you wrote it, look at it and approve it with: cohort config trust %s",
			v.Root, v.Since.Local().Format("2006-01-02 15:04"), v.File)
	case "changed":
		return fmt.Sprintf("changed while a Cohort session could write %s (one is running, or one ended without recording its end): an agent may have written it; if you wrote it, look at it and approve it with: cohort config trust %s",
			v.Root, v.File)
	}
	return fmt.Sprintf("lies inside %s, where an agent's commands could write since %s; if you wrote it, look at it and approve it with: cohort config trust %s",
		v.Root, v.Since.Local().Format("2006-01-02 15:04"), v.File)
}

// Writable returns the root that makes dir model-writable, or nil.
func (b *Book) Writable(dir string) *Verdict {
	if b == nil {
		return nil
	}
	if b.broken != "" {
		return &Verdict{Broken: b.broken}
	}
	d := resolve(dir)
	for _, r := range b.roots {
		if within(r.Path, d) || (d == r.Path && !r.Frozen) {
			return &Verdict{Root: r.Path, Since: r.Since, frozen: r.Frozen}
		}
	}
	return nil
}

// Check returns nil when file (read as data, in configuration directory
// dir) may be obeyed: dir is not model-writable, or a person approved
// exactly this content. Otherwise the verdict says why not.
func (b *Book) Check(dir, file string, data []byte) *Verdict {
	v := b.Writable(dir)
	if v == nil {
		return b.checkTop(resolve(dir), file, data)
	}
	v.File = file
	if v.Broken == "" {
		if a, ok := b.approved[resolve(file)]; ok && a.SHA256 == digest(data) {
			return nil
		}
		if v.frozen && within(filepath.Join(v.Root, ".cohort", "worktrees"), resolve(dir)) && sameAsTop(v.Root, dir, file, data) &&
			b.checkTop(v.Root, filepath.Join(v.Root, relTo(dir, file)), data) == nil {
			return nil
		}
	}
	return v
}

// sameAsTop reports whether file, in dir inside the frozen root (an
// agent's worktree there: elsewhere a copy would move what its relative
// paths and $CLAUDE_PROJECT_DIR name into model-written folders), holds
// exactly what the root's own file of the same name holds: a worktree's
// checked-out .claude/settings.json equal to the main checkout's is the
// same configuration, which the sandbox kept from every agent.
func sameAsTop(root, dir, file string, data []byte) bool {
	rel := relTo(dir, file)
	if rel == "" {
		return false
	}
	top, err := os.ReadFile(filepath.Join(root, rel))
	return err == nil && string(top) == string(data)
}

// relTo is file's path relative to dir (both resolved), "" when it does
// not lie below dir.
func relTo(dir, file string) string {
	rel, err := filepath.Rel(resolve(dir), resolve(file))
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return ""
	}
	return rel
}

// checkTop is the verdict on file, in the directory root (resolved), when
// it is one of the Tracked names at root's top; nil otherwise.
func (b *Book) checkTop(root, file string, data []byte) *Verdict {
	if b == nil || len(b.dirs) == 0 {
		return nil
	}
	rel := relTo(root, file)
	if !slices.Contains(Tracked, rel) {
		return nil
	}
	return b.topVerdict(root, rel, file, data)
}

// CheckFile is Check reading file; a file that cannot be read is
// reported as not approved.
func (b *Book) CheckFile(dir, file string) *Verdict {
	if b.Writable(dir) == nil && (b == nil || !slices.Contains(Tracked, relTo(dir, file))) {
		return nil
	}
	data, _ := os.ReadFile(file)
	return b.Check(dir, file, data)
}

// ConfigDir is the directory whose configuration path is: the one
// holding its .cohort or .claude, else the file's own directory.
func ConfigDir(path string) string {
	for d := filepath.Dir(path); ; {
		if b := filepath.Base(d); b == ".cohort" || b == ".claude" {
			return filepath.Dir(d)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return filepath.Dir(path)
		}
		d = parent
	}
}

// ByApproval reports whether file (data, in configuration directory dir)
// is obeyed only because a person approved its exact content: it lies
// where an agent's commands could write. The approval covers the file's
// bytes, not the programs it names, which lie where agents write too and
// which a session that does not load the file does not protect; so what
// such a file asks to run outside the sandbox runs inside it (hook and
// mcp read this through settings.Source.Approved).
func (b *Book) ByApproval(dir, file string, data []byte) bool {
	if b == nil || b.Writable(dir) == nil {
		return false
	}
	a, ok := b.approved[resolve(file)]
	return ok && a.SHA256 == digest(data)
}
