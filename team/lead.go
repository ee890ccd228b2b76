package team

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/cohort-dev/cohort/internal/filelock"
	"github.com/cohort-dev/cohort/internal/lease"
)

// LeadLock is the file whose lease the process leading a team holds
// (package internal/lease): a kernel lock that dies with that process, so a
// team whose lead ended — normally, by a crash or by SIGKILL — is seen as
// orphaned at once, whatever its file still says.
const LeadLock = "lead.lock"

// ErrLed reports a team that a running session leads.
var ErrLed = errors.New("team is led by a running session")

// LeadState says whether a team's lead is running.
type LeadState string

// Lead states.
const (
	// Led: the process leading the team holds its lead lock.
	Led LeadState = "active"
	// Orphaned: nobody holds the lead lock; the session that led the team
	// ended. A new lead may take the team over or delete it.
	Orphaned LeadState = "orphaned"
)

// LeadInfo is who leads (or last led) a team.
type LeadInfo struct {
	State LeadState
	// SessionID, PID, Host and Since are the lock's record of its holder
	// (the last one when orphaned); zero when the record is missing or
	// unreadable, as for a team made by an older Cohort.
	SessionID string
	PID       int
	Host      string
	Since     time.Time
}

// Leadership is a held lead lock. Release gives it up (the team is then
// orphaned); it may be called more than once.
type Leadership struct{ l *lease.Lease }

// Release gives up the lead.
func (ld *Leadership) Release() {
	if ld != nil {
		ld.l.Release()
	}
}

// How Claim came to lead the team.
const (
	ClaimCreated  = "created"  // the name was free
	ClaimAdopted  = "adopted"  // an orphaned team of the same session, kept as it was
	ClaimReplaced = "replaced" // an orphaned team of another session, replaced by a new one
)

// Claimed is the result of Claim.
type Claimed struct {
	Team *Team
	Lead *Leadership
	// How is ClaimCreated, ClaimAdopted or ClaimReplaced.
	How string
	// Previous is the lead of the team that was adopted or replaced.
	Previous LeadInfo
}

// LeadStatus reports whether team name's lead is running.
func (s *Store) LeadStatus(name string) (LeadInfo, error) {
	dir, err := s.Dir(name)
	if err != nil {
		return LeadInfo{}, err
	}
	if _, err := os.Stat(dir); err != nil {
		return LeadInfo{}, s.notFound(name, err)
	}
	st, h, err := lease.Probe(filepath.Join(dir, LeadLock))
	if err != nil {
		return LeadInfo{}, fmt.Errorf("team %q: %w", name, err)
	}
	info := LeadInfo{State: Orphaned, SessionID: h.Session, PID: h.PID, Host: h.Host, Since: h.Since}
	if st == lease.Held {
		info.State = Led
	}
	return info, nil
}

// Claim makes spec's session the lead of team spec.Name and holds the lead
// lock until Release (or the process's end): it creates the team when the
// name is free; takes over an orphaned team, keeping it when the same
// session led it (a resumed session) and replacing it with a new, empty
// team otherwise; and fails with ErrLed when a running session leads it.
func (s *Store) Claim(ctx context.Context, spec CreateSpec) (*Claimed, error) {
	if spec.LeadSessionID == "" {
		return nil, errors.New("team claim: LeadSessionID is empty")
	}
	holder := lease.Self(spec.LeadSessionID)
	t, ld, err := s.create(ctx, spec, &holder)
	if err == nil {
		return &Claimed{Team: t, Lead: ld, How: ClaimCreated}, nil
	}
	if !errors.Is(err, ErrExists) {
		return nil, err
	}
	dir := filepath.Join(s.cfg.Root, spec.Name)
	prev, err := s.LeadStatus(spec.Name)
	if err != nil {
		return nil, err
	}
	if prev.State == Led {
		return nil, s.ledError(spec.Name, prev)
	}
	l, err := lease.Try(filepath.Join(dir, LeadLock), holder, lease.Options{})
	if err != nil {
		return nil, fmt.Errorf("team claim %q: %w", spec.Name, err)
	}
	if l == nil { // another session took it over a moment ago
		prev, _ = s.LeadStatus(spec.Name)
		return nil, s.ledError(spec.Name, prev)
	}
	ld = &Leadership{l: l}
	old, rerr := s.read(spec.Name)
	if rerr == nil && old.LeadSessionID == spec.LeadSessionID {
		if _, err := s.Update(ctx, spec.Name, func(c *Config) error {
			if i := c.memberIndex(leadNameOf(c)); i >= 0 {
				c.Members[i].IsActive = true
			}
			return nil
		}); err != nil {
			ld.Release()
			return nil, err
		}
		t, err := s.Load(spec.Name)
		if err != nil {
			ld.Release()
			return nil, err
		}
		return &Claimed{Team: t, Lead: ld, How: ClaimAdopted, Previous: prev}, nil
	}
	t, err = s.reset(ctx, spec)
	if err != nil {
		ld.Release()
		return nil, err
	}
	return &Claimed{Team: t, Lead: ld, How: ClaimReplaced, Previous: prev}, nil
}

func (s *Store) ledError(name string, info LeadInfo) error {
	who := "a running session"
	if info.SessionID != "" {
		who = fmt.Sprintf("session %s (pid %d)", info.SessionID, info.PID)
	}
	return fmt.Errorf("team %q: %w: %s leads it; choose another name, or end that session first", name, ErrLed, who)
}

// leadNameOf is the lead's member name.
func leadNameOf(c *Config) string {
	if n, _, err := ParseAgentID(c.LeadAgentID); err == nil {
		return n
	}
	return LeadName
}

// reset replaces an orphaned team's contents with a new team, in place: the
// caller holds the lead lock, which lives in the directory and must stay.
// config.json goes first, so the team is not loadable while it is rebuilt.
func (s *Store) reset(ctx context.Context, spec CreateSpec) (*Team, error) {
	dir := filepath.Join(s.cfg.Root, spec.Name)
	lk, err := filelock.Sidecar(ctx, filepath.Join(dir, configLock), false, s.cfg.LockTimeout)
	if err != nil {
		return nil, s.notFound(spec.Name, err)
	}
	defer lk.Unlock()
	if err := os.Remove(filepath.Join(dir, ConfigFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("team claim %q: %w", spec.Name, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("team claim %q: %w", spec.Name, err)
	}
	for _, e := range entries {
		if e.Name() == LeadLock || e.Name() == configLock {
			continue
		}
		// Moved out of the team first, as Delete does: a teammate of the
		// old team that still writes its status then fails (the path is
		// gone) instead of writing into what is being removed.
		if err := s.discard(spec.Name, filepath.Join(dir, e.Name())); err != nil {
			return nil, fmt.Errorf("team claim %q: clear the orphaned team: %w", spec.Name, err)
		}
	}
	cfg, leadName, err := s.newConfig(spec)
	if err != nil {
		return nil, err
	}
	if err := s.populate(ctx, dir, leadName, cfg); err != nil {
		return nil, fmt.Errorf("team claim %q: %w", spec.Name, err)
	}
	return &Team{Config: cfg.Clone(), Dir: dir}, nil
}

// DeleteOrphaned deletes team name if nobody leads it, holding its lead lock
// meanwhile so that no session takes it over half-deleted. A running lead
// makes it fail with ErrLed.
func (s *Store) DeleteOrphaned(ctx context.Context, name string) error {
	dir, err := s.Dir(name)
	if err != nil {
		return err
	}
	if _, err := os.Stat(dir); err != nil {
		return s.notFound(name, err)
	}
	l, err := lease.Try(filepath.Join(dir, LeadLock), lease.Self(""), lease.Options{})
	if errors.Is(err, fs.ErrNotExist) {
		return s.notFound(name, err)
	}
	if err != nil {
		return fmt.Errorf("team delete %q: %w", name, err)
	}
	if l == nil {
		info, _ := s.LeadStatus(name)
		return s.ledError(name, info)
	}
	defer l.Release()
	return s.Delete(ctx, name)
}
