package dream

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// The gates of the chain, cheapest first.
const (
	GateDisabled = "enabled"  // the auto_dream flag is off
	GateTime     = "time"     // too soon after the last consolidation
	GateThrottle = "throttle" // the sessions were scanned less than ScanEvery ago
	GateSessions = "sessions" // too few sessions touched since
	GateLock     = "lock"     // another process consolidates
)

// DefaultScanEvery is the least time between two session scans of one
// Scheduler.
const DefaultScanEvery = 10 * time.Minute

// Blocked says which gate stopped a consolidation and why.
type Blocked struct {
	Gate   string
	Reason string
}

func (b *Blocked) Error() string { return "no consolidation (" + b.Gate + " gate): " + b.Reason }

// Gates are the tunable thresholds (the auto_dream flags).
type Gates struct {
	Enabled     bool
	MinHours    int
	MinSessions int
}

// Config says where a project's memory and transcripts are and how the
// gates are set. MemoryDir and ProjectDir are required.
type Config struct {
	// MemoryDir holds the memory files and the lock; ProjectDir the
	// project's transcripts ({sessionId}.jsonl).
	MemoryDir  string
	ProjectDir string
	// SessionID is the session asking, never counted as touched.
	SessionID string
	Gates
	// Now is the clock (default time.Now); PID the process id written into
	// the lock (default os.Getpid()); Alive tells whether a holder's PID
	// runs (default signal 0).
	Now   func() time.Time
	PID   int
	Alive func(pid int) bool
	// ScanEvery and StaleAfter default to DefaultScanEvery and
	// DefaultStaleAfter.
	ScanEvery  time.Duration
	StaleAfter time.Duration
}

// Scheduler runs the gate chain for one session. Safe for concurrent use.
type Scheduler struct {
	cfg Config

	mu       sync.Mutex
	lastScan time.Time
}

// NewScheduler returns the gate chain of cfg.
func NewScheduler(cfg Config) *Scheduler {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.PID == 0 {
		cfg.PID = os.Getpid()
	}
	if cfg.Alive == nil {
		cfg.Alive = processAlive
	}
	if cfg.ScanEvery <= 0 {
		cfg.ScanEvery = DefaultScanEvery
	}
	if cfg.StaleAfter <= 0 {
		cfg.StaleAfter = DefaultStaleAfter
	}
	return &Scheduler{cfg: cfg}
}

// Ticket is a won gate chain: the held lock and the sessions to review.
type Ticket struct {
	Lock *Lock
	// Since is the last consolidation (zero: never); Sessions are the ids
	// of the sessions touched since, newest first, the asking one left out.
	Since    time.Time
	Sessions []string
}

// Try runs the gate chain, cheapest first: enabled → at least MinHours
// since the last consolidation (the lock's mtime) → at most one session
// scan per ScanEvery → at least MinSessions sessions touched since (not
// counting this one) → the lock. It returns the ticket, or a *Blocked
// naming the gate that stopped it, or an error reading the files.
func (s *Scheduler) Try(ctx context.Context) (*Ticket, error) {
	if !s.cfg.Enabled {
		return nil, &Blocked{Gate: GateDisabled, Reason: "the auto_dream flag is off"}
	}
	now := s.cfg.Now()
	since, err := LastConsolidated(s.cfg.MemoryDir)
	if err != nil {
		return nil, err
	}
	if min := time.Duration(s.cfg.MinHours) * time.Hour; !since.IsZero() && now.Sub(since) < min {
		return nil, &Blocked{Gate: GateTime, Reason: fmt.Sprintf("the last consolidation was %s ago, less than %d h", now.Sub(since).Round(time.Minute), s.cfg.MinHours)}
	}
	s.mu.Lock()
	if !s.lastScan.IsZero() && now.Sub(s.lastScan) < s.cfg.ScanEvery {
		s.mu.Unlock()
		return nil, &Blocked{Gate: GateThrottle, Reason: fmt.Sprintf("the sessions were scanned %s ago", now.Sub(s.lastScan).Round(time.Second))}
	}
	s.lastScan = now
	s.mu.Unlock()
	sessions, err := s.touched(since)
	if err != nil {
		return nil, err
	}
	if len(sessions) < s.cfg.MinSessions {
		return nil, &Blocked{Gate: GateSessions, Reason: fmt.Sprintf("%d sessions touched since the last consolidation, fewer than %d", len(sessions), s.cfg.MinSessions)}
	}
	return s.take(ctx, since, sessions)
}

// Force skips the gates but the lock (cohort dream): it reviews whatever
// was touched since the last consolidation.
func (s *Scheduler) Force(ctx context.Context) (*Ticket, error) {
	since, err := LastConsolidated(s.cfg.MemoryDir)
	if err != nil {
		return nil, err
	}
	sessions, err := s.touched(since)
	if err != nil {
		return nil, err
	}
	return s.take(ctx, since, sessions)
}

func (s *Scheduler) take(ctx context.Context, since time.Time, sessions []string) (*Ticket, error) {
	l, err := acquire(ctx, s.cfg.MemoryDir, s.cfg.PID, s.cfg.Now(), s.cfg.StaleAfter, s.cfg.Alive)
	if err != nil {
		return nil, err
	}
	return &Ticket{Lock: l, Since: since, Sessions: sessions}, nil
}

// touched lists the sessions whose transcripts changed after since, newest
// first, without the asking session.
func (s *Scheduler) touched(since time.Time) ([]string, error) {
	entries, err := os.ReadDir(s.cfg.ProjectDir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("scan the sessions: %w", err)
	}
	type seen struct {
		id  string
		mod time.Time
	}
	var out []seen
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if !ok || !e.Type().IsRegular() || id == s.cfg.SessionID {
			continue
		}
		fi, err := e.Info()
		if err != nil || !fi.ModTime().After(since) {
			continue
		}
		out = append(out, seen{id, fi.ModTime()})
	}
	slices.SortFunc(out, func(a, b seen) int {
		if c := b.mod.Compare(a.mod); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	ids := make([]string, len(out))
	for i, o := range out {
		ids[i] = o.id
	}
	return ids, nil
}

// TranscriptPath is where session id's transcript is.
func (s *Scheduler) TranscriptPath(id string) string {
	return filepath.Join(s.cfg.ProjectDir, id+".jsonl")
}
