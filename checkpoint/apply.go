package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/internal/safegit"
)

// Options say what a person allowed for a rewind.
type Options struct {
	// Force overwrites files the user changed after the checkpoint.
	Force bool
	// Protected writes protected paths (settings, hooks, .mcp.json, git
	// files) and the index; without it they are left and reported.
	Protected bool
	// MoveBranch moves branches that gained commits back to the
	// checkpoint's commit.
	MoveBranch bool
}

// Result is what a rewind did.
type Result struct {
	// Restored and Deleted are the paths written and removed, as
	// root/path.
	Restored, Deleted []string
	// Left are paths not written, each with why.
	Left []string
	// Moved are the branches moved back.
	Moved []string
}

// Apply carries out a plan. Nothing is written when the plan would
// overwrite a user's edit without opts.Force (ErrNeedsForce). Each root is
// restored on its own: a failure in one is reported and the rest go on.
func (s *Store) Apply(ctx context.Context, p *Plan, opts Options) (*Result, error) {
	var edited []string
	for _, rp := range p.Roots {
		for _, e := range rp.UserEdited {
			edited = append(edited, filepath.Join(rp.Dir, e))
		}
	}
	if len(edited) > 0 && !opts.Force {
		return nil, fmt.Errorf("%w: %s; rewind with force to overwrite them", ErrNeedsForce, strings.Join(edited, ", "))
	}
	res := &Result{}
	var errs []error
	for i := range p.Roots {
		if err := s.applyRoot(ctx, &p.Roots[i], opts, res); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.Roots[i].Dir, err))
		}
	}
	// The tree as the rewind left it ends a turn: edits after it are the
	// user's.
	var roots []Root
	for _, r := range p.Now.Roots {
		roots = append(roots, Root{Dir: r.Dir, Repo: r.layout()})
	}
	if _, err := s.Snapshot(ctx, p.Session, "", Record{Turn: p.Turn, Phase: After}, roots); err != nil {
		errs = append(errs, err)
	}
	return res, errors.Join(errs...)
}

// applyRoot restores one root.
func (s *Store) applyRoot(ctx context.Context, rp *RootPlan, opts Options, res *Result) error {
	skip := map[string]string{}
	if !opts.Protected {
		for _, p := range rp.Protected {
			skip[p] = "a protected path: rewind again allowing protected paths to restore it"
		}
	}
	for _, p := range rp.NotRestorable {
		res.Left = append(res.Left, filepath.Join(rp.Dir, p))
	}
	for _, p := range slices.Concat(rp.Write, rp.Delete) {
		if why, ok := skip[p]; ok {
			res.Left = append(res.Left, filepath.Join(rp.Dir, p)+": "+why)
		}
	}
	for _, p := range rp.Delete {
		if _, ok := skip[p]; ok {
			continue
		}
		if err := removeFile(rp.Dir, p); err != nil {
			return err
		}
		res.Deleted = append(res.Deleted, filepath.Join(rp.Dir, p))
	}
	var write []string
	for _, p := range rp.Write {
		if _, ok := skip[p]; !ok {
			write = append(write, p)
		}
	}
	written, err := s.checkout(ctx, rp, write)
	for _, p := range written {
		res.Restored = append(res.Restored, filepath.Join(rp.Dir, p))
	}
	if err != nil {
		return err
	}
	if rp.Index && opts.Protected {
		if err := s.restoreIndex(ctx, rp.target); err != nil {
			return err
		}
		res.Restored = append(res.Restored, filepath.Join(rp.target.GitDir, "index"))
	} else if rp.Index {
		res.Left = append(res.Left, filepath.Join(rp.target.GitDir, "index")+": staged changes since the checkpoint; rewind again allowing protected paths to restore the index")
	}
	if b := rp.Branch; b != nil && opts.MoveBranch {
		c := safegit.Cmd{Repo: rp.state.layout(), Args: []string{"update-ref", "-m", "cohort rewind", b.Ref, b.To, b.From}, Write: []string{rp.state.CommonDir, rp.state.GitDir}}
		if _, err := s.git.Run(ctx, c); err != nil {
			return err
		}
		res.Moved = append(res.Moved, fmt.Sprintf("%s: %s -> %s", b.Ref, short(b.From), short(b.To)))
	}
	return nil
}

// checkout writes paths from the root's checkpoint tree into the root,
// with git's own checkout (modes, links; contents as stored, no conversion: rawattrs.go), and
// returns those written. When git fails on the whole (an object the
// checkpoint refers to is missing or corrupt), each file is written on
// its own, so that what is intact is restored and the error lists only
// what is not.
func (s *Store) checkout(ctx context.Context, rp *RootPlan, paths []string) ([]string, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	tmp, cleanup, err := s.tempFile(nil)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	os.Remove(tmp) // read-tree makes it
	st := rp.state
	c, err := s.contentCmd(st, tmp, "read-tree", rp.tree)
	if err != nil {
		return nil, err
	}
	c.Alternates = alternates(st)
	if _, err := s.git.Run(ctx, c); err != nil {
		return nil, fmt.Errorf("the checkpoint's tree cannot be read (%w)", err)
	}
	for _, p := range paths {
		// A directory where the checkpoint had a file: git does not
		// replace it.
		if fi, err := os.Lstat(filepath.Join(st.Dir, p)); err == nil && fi.IsDir() {
			return nil, fmt.Errorf("%s is a directory now where the checkpoint has a file; move it away and rewind again", filepath.Join(st.Dir, p))
		}
	}
	run := func(paths []string) error {
		c, err := s.contentCmd(st, tmp, "checkout-index", "-f", "-z", "--stdin")
		if err != nil {
			return err
		}
		c.Alternates, c.Stdin = alternates(st), nulJoin(paths)
		c.Write = append(c.Write, st.Dir)
		_, err = s.git.Run(ctx, c)
		return err
	}
	err = run(paths)
	if err == nil {
		return paths, nil
	}
	if len(paths) == 1 {
		return nil, fmt.Errorf("restoring %s: %w (an object the checkpoint refers to is missing or corrupt: run git fsck)", paths[0], err)
	}
	var written, failed []string
	for _, p := range paths {
		if run([]string{p}) == nil {
			written = append(written, p)
		} else {
			failed = append(failed, p)
		}
	}
	if len(failed) == 0 {
		return written, nil
	}
	return written, fmt.Errorf("%d of %d files could not be restored, the others were: %s (%w; an object the checkpoint refers to is missing or corrupt: run git fsck)", len(failed), len(paths), strings.Join(failed, ", "), err)
}

// removeFile removes root/p and the directories it leaves empty.
func removeFile(root, p string) error {
	path := filepath.Join(root, filepath.FromSlash(p))
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for d := filepath.Dir(path); d != root && strings.HasPrefix(d, root+string(filepath.Separator)); d = filepath.Dir(d) {
		if os.Remove(d) != nil {
			break // not empty
		}
	}
	return nil
}

// restoreIndex writes the repository's index back as the checkpoint
// recorded it, taking git's index.lock so no git runs meanwhile.
func (s *Store) restoreIndex(ctx context.Context, target *RootState) error {
	data, err := s.storeGit(ctx, nil, nil, "cat-file", "blob", target.Index)
	if err != nil {
		return fmt.Errorf("the index recorded as %s cannot be read (%w)", target.Index, err)
	}
	index := filepath.Join(target.GitDir, "index")
	lock := index + ".lock"
	f, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("the index is locked by another git (%w); rewind again when it is done", err)
	}
	if _, err := f.WriteString(data); err != nil {
		f.Close()
		os.Remove(lock)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(lock)
		return err
	}
	return os.Rename(lock, index)
}

// tempFile is a file in the store holding data, and its removal.
func (s *Store) tempFile(data []byte) (string, func(), error) {
	dir := filepath.Join(s.dir, "tmp")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", nil, err
	}
	f, err := os.CreateTemp(dir, "index-*")
	if err != nil {
		return "", nil, err
	}
	name := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	cleanup := func() { os.Remove(name) }
	if err != nil {
		cleanup()
		return "", nil, err
	}
	return name, cleanup, nil
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}
