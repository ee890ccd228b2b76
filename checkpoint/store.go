package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/internal/atomicfile"
	"github.com/cohort-dev/cohort/internal/gitrepo"
	"github.com/cohort-dev/cohort/internal/jsonfile"
	"github.com/cohort-dev/cohort/internal/safegit"
	"github.com/cohort-dev/cohort/permission"
)

// DefaultMaxFileSize is the size above which a changed file is recorded
// by its hash only.
const DefaultMaxFileSize = 10 << 20

// Config says where a Store lives and how it runs git.
type Config struct {
	// Dir is the store's directory, $COHORT_HOME/checkpoints.
	Dir string
	// Git runs every git call (sandboxed when its Sandbox is set).
	Git *safegit.Runner
	// MaxFileSize: changed files larger than this are recorded by hash
	// and reported as not restorable; 0 means DefaultMaxFileSize.
	MaxFileSize int64
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Store is a private object store of checkpoints under Cohort's home. Safe
// for concurrent use; one process writes one session's record.
type Store struct {
	dir, gitDir string
	git         *safegit.Runner
	max         int64
	now         func() time.Time

	mu    sync.Mutex         // guards large, trees and the record files
	large map[string]largeAt // sha256 of large files by path and stat
	trees map[string]string  // the last tree written from each session index
	last  map[string]*lastRoot
	// scanNow is when a root's scan starts, by the kernel's clock (not
	// now's): what its entries' ctimes are compared with.
	scanNow func() time.Time
	// raw remembers what contentCmd needs that does not change while the
	// store is open: repositories' object formats, raw dirs written.
	raw sync.Map
	// stalled are the roots whose git ran past its deadline (blocked.go).
	stalled map[string]*Blocked
}

// Open opens the store at cfg.Dir, making it on first use.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	if cfg.Dir == "" || !filepath.IsAbs(cfg.Dir) {
		return nil, fmt.Errorf("checkpoint store: directory %q must be an absolute path", cfg.Dir)
	}
	s := &Store{dir: cfg.Dir, gitDir: filepath.Join(cfg.Dir, "store.git"), git: cfg.Git, max: cfg.MaxFileSize, now: cfg.Now,
		large: map[string]largeAt{}, trees: map[string]string{}, last: map[string]*lastRoot{}, scanNow: time.Now}
	if s.git == nil {
		s.git = &safegit.Runner{}
	}
	if s.max <= 0 {
		s.max = DefaultMaxFileSize
	}
	if s.now == nil {
		s.now = time.Now
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("checkpoint store: %w", err)
	}
	if _, err := os.Stat(filepath.Join(s.gitDir, "objects")); err == nil {
		return s, nil
	}
	if err := initBare(s.gitDir); err != nil {
		return nil, fmt.Errorf("checkpoint store: %w", err)
	}
	return s, nil
}

// initBare makes the store's bare repository as `git init --bare` would
// (HEAD, config, objects, refs), without a git process: it is made in a
// folder beside it and renamed into place, so a process that loses the
// race to make it uses the winner's.
func initBare(gitDir string) error {
	tmp, err := os.MkdirTemp(filepath.Dir(gitDir), ".store-init-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, d := range []string{"objects/info", "objects/pack", "refs/heads", "refs/tags"} {
		if err := os.MkdirAll(filepath.Join(tmp, filepath.FromSlash(d)), 0o700); err != nil {
			return err
		}
	}
	files := map[string]string{
		"HEAD":   "ref: refs/heads/main\n",
		"config": "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(body), 0o600); err != nil {
			return err
		}
	}
	if err := os.Chmod(tmp, 0o700); err != nil {
		return err
	}
	err = os.Rename(tmp, gitDir)
	if _, serr := os.Stat(filepath.Join(gitDir, "objects")); err != nil && serr == nil {
		return nil // made meanwhile
	}
	return err
}

// Dir is the store's directory.
func (s *Store) Dir() string { return s.dir }

func (s *Store) layout() gitrepo.Layout {
	return gitrepo.Layout{GitDir: s.gitDir, CommonDir: s.gitDir}
}

func (s *Store) objects() string { return filepath.Join(s.gitDir, "objects") }

// storeGit runs a git call on the store itself, reading the objects of
// the repositories in alternates too.
func (s *Store) storeGit(ctx context.Context, alternates []string, stdin []byte, args ...string) (string, error) {
	return s.git.Run(ctx, safegit.Cmd{Repo: s.layout(), Dir: s.dir, Args: args, Stdin: stdin, Write: []string{s.dir}, Alternates: alternates})
}

// Phase says when in a lead's turn a checkpoint was taken.
type Phase string

// The phases: before a user turn of the lead (what a rewind goes back
// to) and after it (to tell the user's later edits from the agents').
const (
	Before Phase = "before"
	After  Phase = "after"
)

// Record is one checkpoint as Cohort recorded it: the id it verifies the
// store's ref against.
type Record struct {
	Seq    int       `json:"seq"`
	Turn   int       `json:"turn"`
	Phase  Phase     `json:"phase"`
	Commit string    `json:"commit"`
	Time   time.Time `json:"time"`
	// Prompt is the start of the user's prompt, for lists of turns.
	Prompt string `json:"prompt,omitempty"`
	// Changed counts the files the turn changed (set on After records).
	Changed int `json:"changed,omitempty"`
	// Conversation is where the lead's conversation was before the turn
	// (set on Before records): what a conversation rewind goes back to.
	Conversation *Place `json:"conversation,omitempty"`
	// Unseen is what the snapshot left out: the session's Read deny rules
	// (with the directories they resolve against) and hidden directories,
	// which its sandboxed git never saw. Every rewind of the session
	// leaves what any of its records' Unseen covers alone, whatever rules
	// are in force when it runs.
	Unseen *permission.Unseen `json:"unseen,omitempty"`
}

// Place is a point in a session's lead transcript: the number of
// boundaries (compactions and rewinds) the file held and the number of
// messages after the last one. A transcript with another count of
// boundaries was rewritten since, and cannot go back to the place.
type Place struct {
	Boundaries int `json:"boundaries"`
	Messages   int `json:"messages"`
}

// Ref is the record's ref in the store.
func (r Record) Ref(session string) string {
	return "refs/cohort/" + session + "/" + strconv.Itoa(r.Seq)
}

// sessionFile is what Cohort records of one session's checkpoints.
type sessionFile struct {
	Version int      `json:"version"`
	Project string   `json:"project"`
	Records []Record `json:"checkpoints"`
}

// checkSession refuses an id that cannot name a file and a ref: up to 128
// letters, digits, '.', '_' and '-', starting with a letter or digit.
func checkSession(id string) error {
	ok := id != "" && len(id) <= 128 && id[0] != '.' && id[0] != '-' && id[0] != '_' &&
		!strings.Contains(id, "..") && !strings.HasSuffix(id, ".lock")
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			ok = false
		}
	}
	if !ok {
		return fmt.Errorf("checkpoint: %q is not a session id (letters, digits, '.', '_', '-')", id)
	}
	return nil
}

func (s *Store) recordPath(session string) string {
	return filepath.Join(s.dir, "sessions", session+".json")
}

// ErrNoCheckpoints: the session has no checkpoints.
var ErrNoCheckpoints = errors.New("the session has no checkpoints")

// Records returns the session's checkpoints in the order taken.
func (s *Store) Records(session string) ([]Record, error) {
	f, err := s.readSession(session)
	if err != nil {
		return nil, err
	}
	return f.Records, nil
}

func (s *Store) readSession(session string) (sessionFile, error) {
	if err := checkSession(session); err != nil {
		return sessionFile{}, err
	}
	path := s.recordPath(session)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return sessionFile{}, fmt.Errorf("session %s: %w (no %s)", session, ErrNoCheckpoints, path)
	}
	if err != nil {
		return sessionFile{}, err
	}
	var f sessionFile
	if err := jsonfile.Decode(data, &f); err != nil {
		return sessionFile{}, jsonfile.Explain(path, data, err, "the file is Cohort's record of the session's checkpoints; move it away to start the session's checkpoints afresh")
	}
	return f, nil
}

// appendRecord adds r to the session's record, numbering it.
func (s *Store) appendRecord(session, project string, r Record) (Record, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.readSession(session)
	if err != nil && !errors.Is(err, ErrNoCheckpoints) {
		return r, err
	}
	f.Version, f.Project = 1, project
	r.Seq = 1
	if n := len(f.Records); n > 0 {
		r.Seq = f.Records[n-1].Seq + 1
	}
	f.Records = append(f.Records, r)
	return r, s.writeSession(session, f)
}

func (s *Store) writeSession(session string, f sessionFile) error {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	path := s.recordPath(session)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(path, append(data, '\n'), 0o600)
}

// ErrForged: a checkpoint's ref in the store does not hold the commit
// Cohort recorded.
var ErrForged = errors.New("checkpoint refused: its ref does not hold the commit Cohort recorded")

// verify checks that r's ref in the store still holds the recorded
// commit, and that the commit is whole.
func (s *Store) verify(ctx context.Context, session string, r Record) error {
	ref := r.Ref(session)
	out, err := s.storeGit(ctx, nil, nil, "for-each-ref", "--format=%(objectname)", ref)
	if err != nil {
		return fmt.Errorf("checkpoint %d (turn %d): %w", r.Seq, r.Turn, err)
	}
	found := strings.TrimSpace(out)
	switch {
	case found == "":
		return fmt.Errorf("checkpoint %d (turn %d): its ref %s is missing from the store %s: the checkpoint was deleted (pruned, or by hand) and cannot be restored", r.Seq, r.Turn, ref, s.gitDir)
	case found != r.Commit:
		return fmt.Errorf("%w: turn %d's ref %s holds %s where %s was recorded in %s; the store was changed outside Cohort, so nothing is restored from it", ErrForged, r.Turn, ref, found, r.Commit, s.recordPath(session))
	}
	return nil
}

// Sessions lists the sessions with checkpoints of project (all when ""),
// most recently written first.
func (s *Store) Sessions(project string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(s.dir, "sessions"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	type dated struct {
		id string
		t  time.Time
	}
	var out []dated
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || checkSession(id) != nil {
			continue
		}
		f, err := s.readSession(id)
		if err != nil || (project != "" && f.Project != project) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		out = append(out, dated{id, info.ModTime()})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].t.After(out[j].t) })
	ids := make([]string, len(out))
	for i, d := range out {
		ids[i] = d.id
	}
	return ids, nil
}
