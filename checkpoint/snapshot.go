package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/cohort-dev/cohort/internal/gitrepo"
	"github.com/cohort-dev/cohort/internal/ownread"
	"github.com/cohort-dev/cohort/internal/safegit"
)

// Root is one directory a checkpoint covers: the main checkout, a
// worktree, or a folder that is not a git repository.
type Root struct {
	// Dir is the directory, absolute.
	Dir string
	// Repo is its repository as Cohort found it before any model ran
	// (package internal/gitrepo); the zero Layout for a plain folder.
	Repo gitrepo.Layout
	// Base, for a worktree made after the checkpoint a rewind goes back
	// to, is the commit it was made from: what the rewind restores there.
	Base string
	// Unseen reports the paths (absolute) a Read deny rule covers: the
	// sandbox hides them from git (a single file shows as a device), so a
	// snapshot leaves them out, as a rewind leaves them alone
	// (Request.Unseen).
	Unseen func(path string) bool
}

// Large is a changed file over the size limit: recorded by its hash only.
type Large struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Head is where a repository's HEAD was.
type Head struct {
	Ref    string `json:"ref,omitempty"` // "" when detached
	Commit string `json:"commit"`
}

// RootState is one root in a checkpoint.
type RootState struct {
	Dir       string  `json:"dir"`
	GitDir    string  `json:"git_dir,omitempty"` // "" for a plain folder
	CommonDir string  `json:"common_dir,omitempty"`
	Tree      string  `json:"tree"`
	Index     string  `json:"index,omitempty"` // blob of the index file's bytes
	Head      *Head   `json:"head,omitempty"`
	Large     []Large `json:"large,omitempty"`
	// Skipped are entries not recorded: repositories nested in the root.
	Skipped []string `json:"skipped,omitempty"`
	// Problems say what of the repository's state was not recorded and
	// why (an index that is a FIFO or too big to be one): the snapshot of
	// the working tree still holds, and the caller reports them.
	Problems []string `json:"problems,omitempty"`
}

// Checkpoint is one checkpoint: Cohort's record and what the store's
// commit says.
type Checkpoint struct {
	Record
	Session string      `json:"session"`
	Roots   []RootState `json:"roots"`
}

// Root returns the state of the root at dir, or nil.
func (c *Checkpoint) Root(dir string) *RootState {
	for i := range c.Roots {
		if c.Roots[i].Dir == dir {
			return &c.Roots[i]
		}
	}
	return nil
}

// layout is the repository to run git in for the root.
func (r *RootState) layout() gitrepo.Layout {
	return gitrepo.Layout{WorkTree: r.Dir, GitDir: r.GitDir, CommonDir: r.CommonDir}
}

// Snapshot takes a checkpoint of roots for a session's turn: each root's
// working tree (tracked and untracked files that are not ignored) and its
// index, written into the store's objects and recorded. project names the
// session's project in its record; rec gives the record's turn, phase,
// prompt and conversation place (Snapshot numbers and times it).
func (s *Store) Snapshot(ctx context.Context, session, project string, rec Record, roots []Root) (*Checkpoint, error) {
	return s.SnapshotThen(ctx, session, project, rec, roots, nil)
}

// SnapshotThen is Snapshot that calls captured once every root's files
// and index are in the store's objects, before the checkpoint's commit,
// record and ref are written and made durable (fsynced). From then on the
// files may change without changing the checkpoint, so a session's
// writers wait for captured, not for the checkpoint's end; only a crash of
// the machine or of Cohort in the milliseconds between the two loses the
// checkpoint (its objects stay, unreferenced, for the next prune).
// captured is not called when the snapshot fails before that point.
func (s *Store) SnapshotThen(ctx context.Context, session, project string, rec Record, roots []Root, captured func()) (*Checkpoint, error) {
	if err := checkSession(session); err != nil {
		return nil, err
	}
	rec.Seq, rec.Commit, rec.Time = 0, "", s.now().UTC()
	cp := &Checkpoint{Session: session, Record: rec}
	for _, r := range roots {
		if g := r.Repo.GitDir; g != "" {
			if _, err := os.Stat(g); errors.Is(err, fs.ErrNotExist) {
				// git would say "not a git repository", as if the
				// project had never been one.
				return nil, fmt.Errorf("checkpoint of %s: %s, the repository's git directory, no longer exists (was .git deleted while the session ran?); this turn has no checkpoint and rewind cannot go back past it; restore the repository and start a new session", r.Dir, g)
			}
		}
		st, err := s.snapRoot(ctx, session, r)
		if err != nil {
			return nil, fmt.Errorf("checkpoint of %s: %w", r.Dir, err)
		}
		cp.Roots = append(cp.Roots, st)
	}
	if captured != nil {
		captured()
	}
	commit, err := s.commit(ctx, cp)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	cp.Commit = commit
	rec, err = s.appendRecord(session, project, cp.Record)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	cp.Record = rec
	if err := s.writeRef(rec.Ref(session), commit); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	return cp, nil
}

// rootCmd is a git call on a root's working tree with the session's own
// index of it and the store's objects.
func (s *Store) rootCmd(st *RootState, index string, args ...string) safegit.Cmd {
	// One thread: a checkpoint is measured in CPU, not in wall time (it
	// runs while the model streams).
	args = append([]string{"-c", "core.preloadIndex=false", "-c", "index.threads=1"}, args...)
	c := safegit.Cmd{Repo: st.layout(), Args: args, Write: []string{s.dir}, Index: index, Objects: s.objects()}
	if st.GitDir == "" {
		c.Repo = gitrepo.Layout{WorkTree: st.Dir, GitDir: s.gitDir, CommonDir: s.gitDir}
		c.Args = append([]string{"-c", "core.bare=false"}, args...)
	}
	return c
}

// snapRoot records one root.
func (s *Store) snapRoot(ctx context.Context, session string, r Root) (RootState, error) {
	st := RootState{Dir: filepath.Clean(r.Dir), GitDir: r.Repo.GitDir, CommonDir: r.Repo.CommonDir}
	if fi, err := os.Stat(st.Dir); err != nil || !fi.IsDir() {
		return st, fmt.Errorf("%s is not a directory", st.Dir)
	}
	index, err := s.sessionIndex(session, st)
	if err != nil {
		return st, err
	}
	sc := scanRoot(st.Dir, st.GitDir, s.scanNow())
	if err := s.blocked(st.Dir, sc); err != nil {
		return st, err
	}
	last, paths, whole := s.changedSince(st.Dir, index, sc)
	if !whole && len(paths) == 0 {
		st.Tree, st.Large, st.Skipped = last.tree, last.large, last.skipped
	} else {
		if whole {
			paths = nil
		}
		if err := s.snapTree(ctx, &st, index, paths, last, r.Unseen); err != nil {
			return st, s.stall(st.Dir, sc, err)
		}
		s.remember(index, sc, &st)
	}
	if st.GitDir != "" {
		if err := s.snapRepo(ctx, &st); err != nil {
			return st, s.stall(st.Dir, sc, err)
		}
	}
	return st, nil
}

// snapTree records a root's working tree through git: the files whose
// stat data changed since the session index last saw them are hashed
// into it, and its tree written. paths, when set, are the only files that
// can have changed since the root's last snapshot (its scan says so):
// git looks at those alone, and the files over the size limit are those
// of the last snapshot that are still listed.
func (s *Store) snapTree(ctx context.Context, st *RootState, index string, paths []string, last *lastRoot, unseen func(string) bool) error {
	out, err := s.listChanged(ctx, st, index, paths, last)
	if err != nil {
		return err
	}
	update, drop := s.sortChanged(st, out, unseen)
	if len(paths) > 0 {
		st.Large, st.Skipped = keepOthers(last.large, paths, st.Large), keepSkipped(st.Dir, last.skipped, st.Skipped)
	}
	if len(update) > 0 {
		// --replace: a path that was a folder and is now a file or a link
		// (or the other way round) takes the place of the entries it
		// conflicts with; without it git refuses the whole snapshot, and
		// with it every later one and the rewind.
		c, err := s.contentCmd(st, index, "update-index", "-z", "--add", "--remove", "--replace", "--stdin")
		if err != nil {
			return err
		}
		c.Stdin = nulJoin(update)
		if _, err := s.git.Run(ctx, c); err != nil {
			return err
		}
	}
	if len(drop) > 0 {
		c, err := s.contentCmd(st, index, "update-index", "-z", "--force-remove", "--stdin")
		if err != nil {
			return err
		}
		c.Stdin = nulJoin(drop)
		if _, err := s.git.Run(ctx, c); err != nil {
			return err
		}
	}
	s.mu.Lock()
	st.Tree = s.trees[index]
	s.mu.Unlock()
	if _, err := os.Stat(index); st.Tree == "" && len(update)+len(drop) == 0 && st.GitDir == "" && errors.Is(err, fs.ErrNotExist) {
		// A plain folder with nothing to record yet: the empty tree,
		// without a git process.
		tree, err := s.writeObject("tree", nil)
		if err != nil {
			return err
		}
		st.Tree = tree
	}
	if st.Tree == "" || len(update)+len(drop) > 0 {
		c, err := s.contentCmd(st, index, "write-tree", "--missing-ok")
		if err != nil {
			return err
		}
		tree, err := s.git.Run(ctx, c)
		if err != nil {
			return err
		}
		st.Tree = strings.TrimSpace(tree)
		s.mu.Lock()
		s.trees[index] = st.Tree // nothing changed next time: the same tree
		s.mu.Unlock()
	}
	return nil
}

// listChanged is git's list (NUL-separated) of the files to record: of
// the whole root, or of paths, the files the scan says can have changed.
// Those the session index holds are told apart by Cohort (changedTracked),
// so git lists only the others, and runs not at all when there are none.
func (s *Store) listChanged(ctx context.Context, st *RootState, index string, paths []string, last *lastRoot) (string, error) {
	ask := paths
	var known []byte
	if len(paths) > 0 && last != nil && (len(last.tree) == 40 || len(last.tree) == 64) {
		hashLen := len(last.tree) / 2
		if changed, others, ok := changedTracked(st.Dir, index, hashLen, paths); ok {
			known, ask = nulJoin(changed), others
			if len(others) == 0 {
				return string(known), nil
			}
		}
	}
	args := []string{"ls-files", "-z", "-m", "-o", "--exclude-standard"}
	if len(paths) > 0 {
		args = append(append([]string{"--literal-pathspecs"}, args...), "--")
		args = append(args, ask...)
	}
	out, err := s.git.Run(ctx, s.rootCmd(st, index, args...))
	return string(known) + out, err
}

// sessionIndex is the path of the session's own index of a root, seeded
// from the repository's index the first time so that only files whose
// stat data changed are read.
func (s *Store) sessionIndex(session string, st RootState) (string, error) {
	sum := sha256.Sum256([]byte(st.Dir))
	path := filepath.Join(s.dir, "index", session, hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", err
	}
	if st.GitDir == "" {
		return path, nil
	}
	data, err := ownread.GitState(filepath.Join(st.GitDir, "index"), ownread.MaxGitIndex)
	var refused *ownread.Refused
	if errors.Is(err, fs.ErrNotExist) || errors.As(err, &refused) {
		return path, nil // git hashes every file once (snapIndex reports a refusal)
	}
	if err != nil {
		return "", err
	}
	return path, os.WriteFile(path, data, 0o600)
}

// sortChanged splits git's list of changed paths into those to record and
// those over the size limit (recorded by hash in st.Large). Nested
// repositories ("dir/") go to st.Skipped.
func (s *Store) sortChanged(st *RootState, out string, unseen func(string) bool) (update, drop []string) {
	seen := map[string]bool{}
	for _, p := range strings.Split(out, "\x00") {
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		if unseen != nil && unseen(filepath.Join(st.Dir, filepath.FromSlash(strings.TrimSuffix(p, "/")))) {
			continue
		}
		if strings.HasSuffix(p, "/") {
			st.Skipped = append(st.Skipped, p)
			continue
		}
		if beyondLink(st.Dir, p) {
			drop = append(drop, p) // its folder is a link or a file now: gone from the root
			continue
		}
		fi, err := os.Lstat(filepath.Join(st.Dir, filepath.FromSlash(p)))
		if err == nil && fi.Mode().Type()&(fs.ModeNamedPipe|fs.ModeSocket|fs.ModeDevice|fs.ModeCharDevice|fs.ModeIrregular) != 0 {
			// A FIFO, socket or device (a command can make one): git
			// records none, and handed one it fails the whole snapshot, so
			// the checkpoint holds it as absent.
			drop = append(drop, p)
			continue
		}
		if err == nil && fi.IsDir() && !isRepo(filepath.Join(st.Dir, filepath.FromSlash(p))) {
			drop = append(drop, p) // a file that is a folder now: its files are listed on their own
			continue
		}
		if err != nil || !fi.Mode().IsRegular() || fi.Size() <= s.max {
			update = append(update, p) // missing: removed; links and small files: recorded
			continue
		}
		sum, err := s.largeHash(filepath.Join(st.Dir, filepath.FromSlash(p)), fi)
		if err != nil {
			sum = "unreadable: " + err.Error()
		}
		st.Large = append(st.Large, Large{Path: p, Size: fi.Size(), SHA256: sum})
		drop = append(drop, p)
	}
	return update, drop
}

// beyondLink reports whether a folder on the way from root to p (a
// slash-separated path in it) is not a folder: a link, which git will not
// look through and Cohort must not either, or a file.
func beyondLink(root, p string) bool {
	dir := root
	parts := strings.Split(p, "/")
	for _, part := range parts[:len(parts)-1] {
		dir = filepath.Join(dir, part)
		fi, err := os.Lstat(dir)
		if err != nil {
			return false // missing: git records the removal itself
		}
		if !fi.IsDir() {
			return true
		}
	}
	return false
}

// isRepo reports whether dir holds a .git (a submodule's or a nested
// repository's checkout), which git's index records as a commit.
func isRepo(dir string) bool {
	_, err := os.Lstat(filepath.Join(dir, ".git"))
	return err == nil
}

// largeAt is a file's hash (a large file's SHA-256, an index's blob) with
// the stat data it was taken at.
type largeAt struct {
	size, mtime, ctime int64
	ino                uint64
	mode               fs.FileMode
	sum                string
}

func statKey(fi fs.FileInfo) largeAt {
	k := largeAt{size: fi.Size(), mtime: fi.ModTime().UnixNano(), mode: fi.Mode()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		k.ino, k.ctime = sys.Ino, ctime(sys)
	}
	return k
}

func (k largeAt) same(o largeAt) bool {
	return k.size == o.size && k.mtime == o.mtime && k.ctime == o.ctime && k.ino == o.ino && k.mode == o.mode
}

// largeHash is the SHA-256 of a large file, computed again only when its
// stat data changed.
func (s *Store) largeHash(path string, fi fs.FileInfo) (string, error) {
	key := statKey(fi)
	s.mu.Lock()
	got, ok := s.large[path]
	s.mu.Unlock()
	if ok && got.same(key) {
		return got.sum, nil
	}
	// Without blocking: the file may have been replaced by a FIFO since
	// it was listed.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if now, err := f.Stat(); err != nil || !now.Mode().IsRegular() {
		return "", fmt.Errorf("%s is no longer a regular file", path)
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	key.sum = hex.EncodeToString(h.Sum(nil))
	s.mu.Lock()
	s.large[path] = key
	s.mu.Unlock()
	return key.sum, nil
}

// snapRepo records a repository root's index (its bytes, as a blob in the
// store) and HEAD.
func (s *Store) snapRepo(ctx context.Context, st *RootState) error {
	if err := s.snapIndex(ctx, st); err != nil {
		return err
	}
	st.Head = readHead(st.GitDir, st.CommonDir)
	return nil
}

// readHead reads where a repository's HEAD is from its files (as git
// would: the HEAD file, then the loose ref, then packed-refs), sparing a
// git process per checkpoint; nil for an unborn branch or a HEAD that
// cannot be read.
func readHead(gitDir, commonDir string) *Head {
	data, err := ownread.GitState(filepath.Join(gitDir, "HEAD"), ownread.MaxGitRef)
	if err != nil {
		return nil
	}
	head := strings.TrimSpace(string(data))
	ref, symbolic := strings.CutPrefix(head, "ref: ")
	if !symbolic {
		return &Head{Commit: head}
	}
	if !strings.HasPrefix(ref, "refs/") || strings.Contains(ref, "..") {
		return nil
	}
	data, err = ownread.GitState(filepath.Join(commonDir, filepath.FromSlash(ref)), ownread.MaxGitRef)
	if err == nil {
		return &Head{Ref: ref, Commit: strings.TrimSpace(string(data))}
	}
	var refused *ownread.Refused
	if errors.As(err, &refused) {
		return nil // not where the branch is: a FIFO or a link into /proc
	}
	packed, err := ownread.GitState(filepath.Join(commonDir, "packed-refs"), ownread.MaxGitPackedRefs)
	if err != nil {
		return nil
	}
	for _, line := range strings.Split(string(packed), "\n") {
		if id, name, ok := strings.Cut(line, " "); ok && name == ref {
			return &Head{Ref: ref, Commit: id}
		}
	}
	return nil
}

// snapIndex records the repository's index file as a blob in the store
// (writeObject), again only when its stat data changed since the last
// time.
func (s *Store) snapIndex(ctx context.Context, st *RootState) error {
	path := filepath.Join(st.GitDir, "index")
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	key := statKey(fi)
	s.mu.Lock()
	got, ok := s.large[path]
	s.mu.Unlock()
	if ok && got.same(key) {
		st.Index = got.sum
		return nil
	}
	data, err := ownread.GitState(path, ownread.MaxGitIndex)
	var refused *ownread.Refused
	if errors.As(err, &refused) {
		// The tree and HEAD are still recorded; a rewind leaves the
		// index as it finds it.
		st.Problems = append(st.Problems, fmt.Sprintf("the index was not recorded, so a rewind leaves it as it is: %v (if git also fails on it: remove it and run git reset, which rebuilds it from HEAD)", err))
		return nil
	}
	if err != nil {
		return err
	}
	// Written by Cohort, as git writes a loose blob: a sandboxed
	// hash-object took a process at every session's start for it.
	oid, err := s.writeObject("blob", data)
	if err != nil {
		return err
	}
	st.Index = oid
	key.sum = st.Index
	s.mu.Lock()
	s.large[path] = key
	s.mu.Unlock()
	return nil
}

// Load returns the session's checkpoint seq after verifying that its ref
// holds the commit Cohort recorded and that the commit's bytes hash to
// its id.
func (s *Store) Load(ctx context.Context, session string, r Record) (*Checkpoint, error) {
	if err := s.verify(ctx, session, r); err != nil {
		return nil, err
	}
	body, err := s.storeGit(ctx, nil, nil, "cat-file", "commit", r.Commit)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %d (turn %d): its commit %s cannot be read: %w", r.Seq, r.Turn, r.Commit, err)
	}
	if got := objectID("commit", []byte(body), len(r.Commit)); got != r.Commit {
		return nil, fmt.Errorf("%w: turn %d's commit object %s holds bytes that hash to %s: the store's object was changed", ErrForged, r.Turn, r.Commit, got)
	}
	_, msg, ok := strings.Cut(body, "\n\n")
	if !ok {
		return nil, fmt.Errorf("checkpoint %d: commit %s has no message", r.Seq, r.Commit)
	}
	var cp Checkpoint
	if err := json.Unmarshal([]byte(msg), &cp); err != nil {
		return nil, fmt.Errorf("checkpoint %d: commit %s: %w", r.Seq, r.Commit, err)
	}
	if cp.Session != session || cp.Turn != r.Turn || cp.Phase != r.Phase {
		return nil, fmt.Errorf("%w: the commit of turn %d is for session %s turn %d (%s)", ErrForged, r.Turn, cp.Session, cp.Turn, cp.Phase)
	}
	cp.Record = r
	return &cp, nil
}
