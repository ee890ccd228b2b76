package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Retention says which checkpoints are kept: those of each session's last
// KeepTurns turns that are at most KeepDays days old.
type Retention struct {
	KeepTurns int `json:"keepTurns"`
	KeepDays  int `json:"keepDays"`
}

// DefaultRetention keeps the last 100 turns of a session for 30 days.
var DefaultRetention = Retention{KeepTurns: 100, KeepDays: 30}

// Pruned is what a prune removed.
type Pruned struct {
	Checkpoints int
	Sessions    []string // sessions left without checkpoints (their records removed)
}

// Prune removes the checkpoints r does not keep, from every session of the
// store (session "" ) or one, and with objects true the objects no
// checkpoint needs any more (git prune, for objects over an hour old: a
// snapshot being taken meanwhile keeps its own).
func (s *Store) Prune(ctx context.Context, session string, r Retention, objects bool) (Pruned, error) {
	var out Pruned
	ids := []string{session}
	if session == "" {
		var err error
		if ids, err = s.Sessions(""); err != nil {
			return out, err
		}
	}
	var errs []error
	for _, id := range ids {
		n, gone, err := s.pruneSession(id, r)
		out.Checkpoints += n
		if gone {
			out.Sessions = append(out.Sessions, id)
		}
		errs = append(errs, err)
	}
	if objects && out.Checkpoints > 0 {
		if _, err := s.storeGit(ctx, nil, nil, "prune", "--expire=1.hour.ago"); err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

// pruneSession drops one session's checkpoints that r does not keep.
func (s *Store) pruneSession(session string, r Retention) (removed int, gone bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, err := s.readSession(session)
	if err != nil {
		return 0, false, err
	}
	cutoff := s.now().Add(-time.Duration(r.KeepDays) * 24 * time.Hour)
	turns := map[int]bool{} // the last KeepTurns turns
	for i := len(f.Records) - 1; i >= 0 && len(turns) < r.KeepTurns; i-- {
		turns[f.Records[i].Turn] = true
	}
	var keep []Record
	for _, rec := range f.Records {
		if (r.KeepTurns <= 0 || turns[rec.Turn]) && (r.KeepDays <= 0 || rec.Time.After(cutoff)) {
			keep = append(keep, rec)
			continue
		}
		if err := os.Remove(filepath.Join(s.gitDir, filepath.FromSlash(rec.Ref(session)))); err != nil && !os.IsNotExist(err) {
			return removed, false, fmt.Errorf("checkpoint prune: %w", err)
		}
		removed++
	}
	if removed == 0 {
		return 0, false, nil
	}
	if len(keep) == 0 {
		_ = os.RemoveAll(filepath.Join(s.dir, "index", session))
		_ = os.RemoveAll(filepath.Join(s.gitDir, "refs", "cohort", session))
		return removed, true, os.Remove(s.recordPath(session))
	}
	f.Records = keep
	return removed, false, s.writeSession(session, f)
}

// String is a line for a person.
func (p Pruned) String() string {
	msg := fmt.Sprintf("removed %d checkpoint(s)", p.Checkpoints)
	if len(p.Sessions) > 0 {
		msg += fmt.Sprintf("; sessions left without any: %s", strings.Join(p.Sessions, ", "))
	}
	return msg
}
