package team

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/internal/atomicfile"
	"github.com/cohort-dev/cohort/internal/filelock"
	"github.com/cohort-dev/cohort/internal/jsonfile"
	"github.com/cohort-dev/cohort/internal/lease"
	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/tasklist"
)

// File and directory names inside a team directory.
const (
	ConfigFile = "config.json"
	configLock = "config.lock"
	InboxesDir = "inboxes"
	TasksDir   = "tasks"
)

// StoreConfig configures a Store. Only Root is required.
type StoreConfig struct {
	// Root is the directory holding one directory per team, normally
	// $COHORT_HOME/teams. It is created (mode 0700) on first use.
	Root string
	// Now is the clock for createdAt, joinedAt and addedAt (default time.Now).
	Now func() time.Time
	// LockTimeout bounds every lock wait whose context has a later deadline
	// or none (default 10 s).
	LockTimeout time.Duration
	// Replicas is how many servers of a JetStream cluster keep each
	// stream and bucket of a team on NATS (default 1; 3 on a three-node
	// cluster, so the team survives losing one).
	Replicas int
	// Mailbox is the template for each team's mailbox configuration; its
	// Path is set to the team's inboxes directory.
	Mailbox mailbox.Config
	// KeysRoot holds the members' signing keys, one directory per team
	// (default: keys/ in the team's directory). Cohort's sessions keep
	// them under $COHORT_HOME/remote/teams, which the sandbox hides from
	// every command: a model's command must not read the lead's key.
	KeysRoot string
}

// HomeConfig is the StoreConfig of the teams of a Cohort home: Root
// home/teams, and the keys under home/remote/teams, beside the remote
// agents' key in the directory the sandbox hides from commands.
func HomeConfig(home string) StoreConfig {
	return StoreConfig{Root: filepath.Join(home, "teams"), KeysRoot: filepath.Join(home, "remote", "teams")}
}

// Store manages the teams under one root directory. It is safe for
// concurrent use by any number of goroutines and processes: every
// read-modify-write of a team file holds the team's file lock.
type Store struct {
	cfg StoreConfig

	mu   sync.Mutex
	nets map[string]*netMailbox // JetStream mailboxes by team (jetstream.go)
	// reported are the team file revisions whose refused terms were
	// reported (terms.go), so each is reported once.
	reported map[string]bool
}

// Team is a snapshot of one team: its file as it was read, and where it
// lives.
type Team struct {
	Config Config
	Dir    string // the team directory
}

// Name returns the team's name.
func (t *Team) Name() string { return t.Config.Name }

// ActiveMembers returns the members that are part of the running team, the
// lead first.
func (t *Team) ActiveMembers() []Member { return t.Config.ActiveMembers() }

// NewStore returns a Store over cfg.Root. It touches no files.
func NewStore(cfg StoreConfig) (*Store, error) {
	if cfg.Root == "" {
		return nil, errors.New("team: StoreConfig.Root is empty")
	}
	if !filepath.IsAbs(cfg.Root) {
		abs, err := filepath.Abs(cfg.Root)
		if err != nil {
			return nil, fmt.Errorf("team: root %s: %w", cfg.Root, err)
		}
		cfg.Root = abs
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.LockTimeout <= 0 {
		cfg.LockTimeout = 10 * time.Second
	}
	return &Store{cfg: cfg}, nil
}

// Root returns the directory holding the teams.
func (s *Store) Root() string { return s.cfg.Root }

// Dir returns the directory of team name (which need not exist).
func (s *Store) Dir(name string) (string, error) {
	if err := ValidateName(name); err != nil {
		return "", fmt.Errorf("team: %w", err)
	}
	return filepath.Join(s.cfg.Root, name), nil
}

func (s *Store) configPath(name string) string {
	return filepath.Join(s.cfg.Root, name, ConfigFile)
}

// Mailbox opens the team's mailbox: the transport every member's inbox
// lives on — the directory inboxes/, or JetStream on the NATS server the
// team's file names (never the one for the other).
func (s *Store) Mailbox(name string) (mailbox.Transport, error) {
	dir, err := s.Dir(name)
	if err != nil {
		return nil, err
	}
	cfg, err := s.read(name)
	if err != nil {
		return nil, err
	}
	if cfg.NATS != "" {
		return s.jetstream(context.Background(), name, cfg.NATS)
	}
	mc := s.cfg.Mailbox
	mc.Path = filepath.Join(dir, InboxesDir)
	return mailbox.OpenDir(mc)
}

// Tasks returns the team's shared task list: the files under tasks/, or
// for a team on NATS the entry in its state bucket (never the one for the
// other). A team file here that cannot be read leaves the files' list.
func (s *Store) Tasks(name string) (*tasklist.List, error) {
	dir, err := s.Dir(name)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, ConfigFile)); err != nil {
		return nil, s.notFound(name, err)
	}
	if local, err := s.readLocal(name); err == nil && local.NATS != "" {
		return s.tasksNet(name, local)
	}
	return tasklist.Open(tasklist.Config{
		Dir: filepath.Join(dir, TasksDir), Now: s.cfg.Now, LockTimeout: s.cfg.LockTimeout,
	})
}

// notFound maps a stat or open error of a team's file.
func (s *Store) notFound(name string, err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, filelock.ErrDirGone) {
		return fmt.Errorf("team %q: %w (no %s under %s)", name, ErrNotFound, ConfigFile, s.cfg.Root)
	}
	return fmt.Errorf("team %q: %w", name, err)
}

// CreateSpec describes a new team.
type CreateSpec struct {
	Name        string
	Description string
	// LeadAgentID is "name@team" for the lead; default "team-lead@{Name}".
	LeadAgentID   string
	LeadSessionID string
	// LeadModel, Cwd and LeadMode fill the lead's member entry.
	LeadModel string
	Cwd       string
	LeadMode  string
	// NATS names the NATS server whose JetStream holds the team's
	// mailboxes (Config.NATS); empty for files.
	NATS string
}

// Create makes a team: its directory, config.json with the lead as the
// first member, the mailbox with the lead's inbox, and tasks/. It fails
// with ErrExists when the directory exists and ErrInvalidName for a bad
// name. It takes no lead lock: the team is orphaned from the start unless
// made by Claim, which a running lead uses.
func (s *Store) Create(ctx context.Context, spec CreateSpec) (*Team, error) {
	t, _, err := s.create(ctx, spec, nil)
	return t, err
}

// create is Create; with holder set it takes the lead lock for holder
// before config.json exists, so a team is never visible unled while its
// creator runs.
func (s *Store) create(ctx context.Context, spec CreateSpec, holder *lease.Holder) (*Team, *Leadership, error) {
	cfg, leadName, err := s.newConfig(spec)
	if err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(s.cfg.Root, 0o700); err != nil {
		return nil, nil, fmt.Errorf("team create: %w", err)
	}
	dir := filepath.Join(s.cfg.Root, spec.Name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, nil, fmt.Errorf("team create %q: %w (in %s); pick another name or delete the old team", spec.Name, ErrExists, s.cfg.Root)
		}
		return nil, nil, fmt.Errorf("team create: %w", err)
	}
	var ld *Leadership
	if holder != nil {
		l, err := lease.Acquire(ctx, filepath.Join(dir, LeadLock), *holder, lease.Options{})
		if err != nil {
			os.RemoveAll(dir)
			return nil, nil, fmt.Errorf("team create %q: %w", spec.Name, err)
		}
		ld = &Leadership{l: l}
	}
	if err := s.populate(ctx, dir, leadName, cfg); err != nil {
		// Leave no half-made team behind: the name stays free.
		ld.Release()
		os.RemoveAll(dir)
		return nil, nil, fmt.Errorf("team create %q: %w", spec.Name, err)
	}
	return &Team{Config: cfg.Clone(), Dir: dir}, ld, nil
}

// newConfig is the team file of a new team, and the lead's name.
func (s *Store) newConfig(spec CreateSpec) (Config, string, error) {
	if err := ValidateName(spec.Name); err != nil {
		return Config{}, "", fmt.Errorf("team create: %w", err)
	}
	leadName := LeadName
	if spec.LeadAgentID != "" {
		n, t, err := ParseAgentID(spec.LeadAgentID)
		if err != nil {
			return Config{}, "", fmt.Errorf("team create: lead: %w", err)
		}
		if t != spec.Name {
			return Config{}, "", fmt.Errorf("team create: lead agent id %q belongs to team %q, not %q", spec.LeadAgentID, t, spec.Name)
		}
		leadName = n
	}
	now := s.cfg.Now()
	return Config{
		Name: spec.Name, Description: spec.Description, CreatedAt: now, NATS: spec.NATS,
		LeadAgentID: AgentID(leadName, spec.Name), LeadSessionID: spec.LeadSessionID,
		Members: []Member{{
			AgentID: AgentID(leadName, spec.Name), Name: leadName, AgentType: LeadAgentType,
			Model: spec.LeadModel, JoinedAt: now, Cwd: spec.Cwd, IsActive: true,
			Mode: spec.LeadMode, SessionID: spec.LeadSessionID,
		}},
	}, leadName, nil
}

// populate fills a new team directory; config.json comes last, so a team
// is loadable only once it is complete.
func (s *Store) populate(ctx context.Context, dir, leadName string, cfg Config) error {
	if err := os.Mkdir(filepath.Join(dir, TasksDir), 0o700); err != nil {
		return err
	}
	mc := s.cfg.Mailbox
	mc.Path = filepath.Join(dir, InboxesDir)
	var mb mailbox.Transport
	var err error
	if cfg.NATS != "" {
		var m *netMailbox
		if m, err = s.net(ctx, cfg.Name, cfg.NATS); err == nil {
			mb, err = m.tr, s.seedNet(ctx, m, cfg)
		}
	} else {
		mb, err = mailbox.OpenDir(mc)
	}
	if err != nil {
		return err
	}
	if err := mb.Register(ctx, leadName); err != nil {
		return err
	}
	data, err := MarshalConfig(cfg)
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, ConfigFile), data, 0o600)
}

// Load reads team name's file. A file that is not valid JSON, or not a
// valid team, is a *jsonfile.Error naming it.
func (s *Store) Load(name string) (*Team, error) {
	dir, err := s.Dir(name)
	if err != nil {
		return nil, err
	}
	cfg, err := s.read(name)
	if err != nil {
		return nil, err
	}
	return &Team{Config: cfg, Dir: dir}, nil
}

// read returns team name's file: this machine's copy, or for a team on
// NATS the server's.
func (s *Store) read(name string) (Config, error) {
	cfg, err := s.readLocal(name)
	if err != nil || cfg.NATS == "" {
		return cfg, err
	}
	return s.readNet(name, cfg)
}

// readLocal reads config.json on this machine.
func (s *Store) readLocal(name string) (Config, error) {
	path := s.configPath(name)
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, s.notFound(name, err)
	}
	cfg, err := ParseConfig(path, data)
	if err != nil {
		return Config{}, err
	}
	if err := cfg.validate(name); err != nil {
		return Config{}, &jsonfile.Error{Path: path, Err: err, Hint: "fix the file by hand, or delete the team directory to start over"}
	}
	return cfg, nil
}

// List returns the names of the teams that have a team file, sorted.
func (s *Store) List() ([]string, error) {
	all, err := s.ListAll()
	return slices.DeleteFunc(all, func(name string) bool {
		_, err := os.Stat(s.configPath(name))
		return err != nil
	}), err
}

// ListAll returns the names of every team directory, sorted, including
// those without a readable team file (a creation cut short): `cohort teams`
// lists and removes them too.
func (s *Store) ListAll() ([]string, error) {
	entries, err := os.ReadDir(s.cfg.Root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("team list: %w", err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && ValidateName(e.Name()) == nil {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out, nil
}

// Delete removes team name's directory with everything in it. It holds the
// team lock while it moves the directory aside, so no Update is half done;
// the caller shuts the members down first (see ActiveMembers).
func (s *Store) Delete(ctx context.Context, name string) error {
	dir, err := s.Dir(name)
	if err != nil {
		return err
	}
	if _, err := os.Stat(dir); err != nil {
		return s.notFound(name, err)
	}
	lk, err := filelock.Sidecar(ctx, filepath.Join(dir, configLock), false, s.cfg.LockTimeout)
	if err != nil {
		return s.notFound(name, err)
	}
	defer lk.Unlock()
	if err := s.discard(name, dir); err != nil {
		return fmt.Errorf("team delete %q: %w", name, err)
	}
	return nil
}

// discard removes path (a team directory, or an entry of one) by moving
// it to a trash name under the root first, so that the rename is the
// moment it is gone: a process still writing under the old path fails
// rather than fills what is being removed. A write that had already
// started in it can land while it is removed (ENOTEMPTY): that write is
// one file, so removal is tried again, three times in all.
func (s *Store) discard(name, path string) error {
	var suffix [6]byte
	rand.Read(suffix[:])
	trash := filepath.Join(s.cfg.Root, ".deleted-"+name+"-"+filepath.Base(path)+"-"+hex.EncodeToString(suffix[:]))
	if err := os.Rename(path, trash); err != nil {
		return err
	}
	if err := atomicfile.SyncDir(s.cfg.Root); err != nil {
		return err
	}
	var err error
	for range 3 {
		if err = os.RemoveAll(trash); err == nil {
			return nil
		}
	}
	return fmt.Errorf("moved to %s but could not remove it: %w", trash, err)
}

// Update applies fn to team name's file under the team lock and writes the
// result atomically. fn gets a private copy; returning an error leaves the
// file untouched. An unreadable or invalid file is never overwritten.
// Update returns the configuration as written.
func (s *Store) Update(ctx context.Context, name string, fn func(*Config) error) (Config, error) {
	dir, err := s.Dir(name)
	if err != nil {
		return Config{}, err
	}
	if _, err := os.Stat(filepath.Join(dir, ConfigFile)); err != nil {
		return Config{}, s.notFound(name, err)
	}
	lk, err := filelock.Sidecar(ctx, filepath.Join(dir, configLock), false, s.cfg.LockTimeout)
	if err != nil {
		return Config{}, s.notFound(name, err)
	}
	defer lk.Unlock()
	cfg, err := s.readLocal(name)
	if err != nil {
		return Config{}, err
	}
	if cfg.NATS != "" {
		return s.updateNet(ctx, name, cfg, fn)
	}
	if err := fn(&cfg); err != nil {
		return Config{}, err
	}
	if err := cfg.validate(name); err != nil {
		return Config{}, fmt.Errorf("team %q: update would make the file invalid: %w", name, err)
	}
	data, err := MarshalConfig(cfg)
	if err != nil {
		return Config{}, fmt.Errorf("team %q: %w", name, err)
	}
	if err := atomicfile.Write(s.configPath(name), data, 0o600); err != nil {
		return Config{}, fmt.Errorf("team %q: write %s: %w", name, ConfigFile, err)
	}
	return cfg.Clone(), nil
}
