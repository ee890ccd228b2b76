package team

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/cohort-dev/cohort/internal/atomicfile"
)

// The lead's terms. On NATS the team file is an entry of the state bucket
// that any client of the server may write. What in it grants permissions
// — each member's permission mode, whether its plan needs the lead's
// approval, and the team-allowed paths — counts only as the lead signed
// it. Decisions:
//
//   - The lead's machine signs those fields (Terms) into the entry itself,
//     as the top-level field "cohortTerms", in the same compare-and-set
//     as every change, so the file and its terms never disagree in time.
//     Every machine reads them from there, checked with the lead's key
//     (pinned from the signed spawn on a worker; the lead's own on its
//     machine), and overlays them on what it read: the unsigned fields
//     beside them count for nothing.
//   - Terms carry a sequence number, one more at each change. A machine
//     keeps the highest it accepted (keys/terms.json) and falls back on it
//     when the entry's terms do not verify, are missing or are older (a
//     rolled-back entry); the refusal is reported (the store's
//     Mailbox.OnProblem) naming the bucket, key and revision, once per
//     revision. A machine with no accepted terms to fall back on fails to
//     read the team, with that error.
//   - A teammate spawn carries the (Created, Seq) of the terms the lead
//     issued it under (SpawnTerms; the worker pins them with PinTerms
//     before it reads the team). A machine accepts no terms below them
//     (an earlier team's of the same name, or this team's older ones,
//     written in the bucket before the worker joined: keyattack7): they
//     are refused and reported as a rolled-back entry is, and a machine
//     with no accepted terms at or above them fails to read the team
//     until the lead's machine signs them again.
//   - Unsigned fields that differ from the terms are reported the same
//     way (someone rewrote the entry) and ignored; the team's creation
//     time (createdAt) is among them.
//   - A member the terms do not name (put in the file by someone other
//     than the lead) runs with its plan to be approved, in default mode.
//   - Only the lead's machine changes terms; an Update elsewhere that
//     would change them is an error (a teammate may still mark itself
//     inactive there).
//   - A machine that knows no key of the lead (it joined without a spawn)
//     cannot check terms: it reads every member as the previous point
//     says, and no team-allowed paths.
//   - On files the team file is this machine's and nothing is signed.
//
// Mode and plan approval of a teammate on a worker come, besides, from
// its signed spawn and are capped by the worker's policy (remote.Policy);
// the terms keep a bucket writer from changing them for the teammates on
// the lead's machine and for every read elsewhere.

// termsField is the team file's top-level field holding the signed terms.
const termsField = "cohortTerms"

const termsContext = "cohort team terms v1\n"

// Terms are the lead's signed word on the permission fields of a team
// file.
type Terms struct {
	Team string `json:"team"`
	// Created is the team's creation time (epoch ms): terms of an earlier
	// team of the same name, led with the same key, are older whatever
	// their Seq.
	Created   int64                  `json:"created"`
	Seq       uint64                 `json:"seq"`
	Members   map[string]MemberTerms `json:"members"`
	Allowed   []termsPath            `json:"teamAllowedPaths"`
	Signature string                 `json:"signature,omitempty"`
}

// MemberTerms are one member's permission fields.
type MemberTerms struct {
	Mode             string `json:"mode,omitempty"`
	PlanModeRequired bool   `json:"planModeRequired,omitempty"`
}

type termsPath struct {
	Path     string `json:"path"`
	ToolName string `json:"toolName,omitempty"`
	AddedBy  string `json:"addedBy,omitempty"`
	AddedAt  int64  `json:"addedAt,omitempty"`
}

func (t Terms) unsigned() Terms { t.Signature = ""; return t }

// termsOf are cfg's permission fields as terms (unsigned, Seq 0).
func termsOf(cfg Config) Terms {
	t := Terms{Team: cfg.Name, Created: cfg.CreatedAt.UnixMilli(), Members: map[string]MemberTerms{}}
	for _, m := range cfg.Members {
		t.Members[m.Name] = MemberTerms{Mode: m.Mode, PlanModeRequired: m.PlanModeRequired}
	}
	for _, p := range cfg.TeamAllowedPaths {
		t.Allowed = append(t.Allowed, termsPath{Path: p.Path, ToolName: p.ToolName, AddedBy: p.AddedBy, AddedAt: p.AddedAt.UnixMilli()})
	}
	return t
}

// same reports whether t and u say the same, whatever their Seq.
func (t Terms) same(u Terms) bool {
	return t.Team == u.Team && t.Created == u.Created && maps.Equal(t.Members, u.Members) && slices.Equal(t.Allowed, u.Allowed)
}

// keeps reports whether u leaves what t says as it is: the team-allowed
// paths, and the terms of each member both name. A machine other than
// the lead's may add a member (which runs, until the lead signs its
// terms, as one the terms do not name) or remove one, nothing more.
func (t Terms) keeps(u Terms) bool {
	if !slices.Equal(t.Allowed, u.Allowed) {
		return false
	}
	for name, mt := range t.Members {
		if ut, ok := u.Members[name]; ok && ut != mt {
			return false
		}
	}
	return true
}

// older reports whether t came before u.
func (t Terms) older(u Terms) bool {
	return t.Created < u.Created || t.Created == u.Created && t.Seq < u.Seq
}

// apply overlays t on cfg: the team's creation time, the members' modes
// and plan approval, and the team-allowed paths, are t's. The creation
// time dates what an earlier team of the same name left (the lead's
// statuses, signed tasks): the file's own createdAt is unsigned, so a
// writer of the bucket could set it to the earlier team's.
func (t Terms) apply(cfg *Config) {
	if t.Created != 0 {
		cfg.CreatedAt = time.UnixMilli(t.Created)
	}
	for i := range cfg.Members {
		m := &cfg.Members[i]
		if mt, ok := t.Members[m.Name]; ok {
			m.Mode, m.PlanModeRequired = mt.Mode, mt.PlanModeRequired
		} else {
			m.Mode, m.PlanModeRequired = "default", true
		}
	}
	cfg.TeamAllowedPaths = nil
	for _, p := range t.Allowed {
		cfg.TeamAllowedPaths = append(cfg.TeamAllowedPaths, AllowedPath{Path: p.Path, ToolName: p.ToolName, AddedBy: p.AddedBy, AddedAt: time.UnixMilli(p.AddedAt)})
	}
}

func (k memberKeys) termsPath() string { return filepath.Join(k.dir, "terms.json") }

func (k memberKeys) floorPath() string { return filepath.Join(k.dir, "terms.floor") }

// TermsMark names a version of the lead's terms: the team's creation
// time (epoch ms) and the terms' sequence number.
type TermsMark struct {
	Created int64  `json:"created"`
	Seq     uint64 `json:"seq"`
}

// SpawnTerms is the mark of the terms in force on this machine, the
// lead's: a teammate spawn carries it, so that its worker accepts no
// older terms written in the bucket before it joined (PinTerms).
func (s *Store) SpawnTerms(team string) (TermsMark, error) {
	k, err := s.keysOf(team)
	if err != nil {
		return TermsMark{}, err
	}
	lead, err := k.leadPublic()
	if err != nil {
		return TermsMark{}, err
	}
	t, ok := k.acceptedTerms(lead)
	if !ok {
		return TermsMark{}, fmt.Errorf("team %q: this machine has accepted no terms of the lead to spawn a teammate under", team)
	}
	return TermsMark{t.Created, t.Seq}, nil
}

// PinTerms records m, a teammate spawn's terms mark (SpawnTerms), as the
// least terms this machine accepts for team; a lower one pinned before
// is raised, a higher one kept.
func (s *Store) PinTerms(team string, m TermsMark) error {
	k, err := s.keysOf(team)
	if err != nil {
		return err
	}
	if cur, ok := k.termsFloor(); ok && !(Terms{Created: cur.Created, Seq: cur.Seq}).older(Terms{Created: m.Created, Seq: m.Seq}) {
		return nil
	}
	if err := os.MkdirAll(k.dir, 0o700); err != nil {
		return err
	}
	data, _ := json.Marshal(m)
	return atomicfile.Write(k.floorPath(), data, 0o600)
}

// termsFloor is the terms mark pinned here from a spawn, if any.
func (k memberKeys) termsFloor() (TermsMark, bool) {
	data, err := os.ReadFile(k.floorPath())
	var m TermsMark
	if err != nil || json.Unmarshal(data, &m) != nil {
		return TermsMark{}, false
	}
	return m, true
}

// acceptedTerms are the highest terms this machine accepted, checked with
// lead.
func (k memberKeys) acceptedTerms(lead ed25519.PublicKey) (Terms, bool) {
	data, err := os.ReadFile(k.termsPath())
	if err != nil {
		return Terms{}, false
	}
	var t Terms
	if json.Unmarshal(data, &t) != nil || k.checkTerms(t, lead) != nil {
		return Terms{}, false
	}
	return t, true
}

func (k memberKeys) checkTerms(t Terms, lead ed25519.PublicKey) error {
	switch {
	case !verifyValue(termsContext, t.unsigned(), t.Signature, lead):
		return errors.New("they do not verify with the lead's key")
	case t.Team != k.team:
		return fmt.Errorf("they are signed for team %q", t.Team)
	}
	return nil
}

// keep records t as the highest terms accepted here, unless higher ones
// are.
func (k memberKeys) keep(t Terms, lead ed25519.PublicKey) error {
	if cur, ok := k.acceptedTerms(lead); ok && !cur.older(t) {
		return nil
	}
	if err := os.MkdirAll(k.dir, 0o700); err != nil {
		return err
	}
	data, _ := json.Marshal(t)
	return atomicfile.Write(k.termsPath(), data, 0o600)
}

// terms are the terms in force for cfg, read from the bucket at revision
// rev: its own when they verify and are not older than what this machine
// accepted, else the accepted ones (the refusal reported). known is false
// when this machine knows no key of the lead to check them with.
func (k memberKeys) terms(cfg Config, rev uint64) (t Terms, known bool, err error) {
	lead, err := k.leadPublic()
	if err != nil {
		return Terms{}, false, nil
	}
	where := fmt.Sprintf("team %q: the lead's terms in the team file (bucket %s key %s revision %d, field %q)", k.team, StateBucket(k.team), ConfigKey, rev, termsField)
	acc, hasAcc := k.acceptedTerms(lead)
	low, hasLow := k.termsFloor()
	floor := Terms{Created: low.Created, Seq: low.Seq}
	if hasAcc && hasLow && acc.older(floor) {
		hasAcc = false // accepted before a later spawn: below what it was issued under
	}
	var why error
	raw, ok := cfg.Extra[termsField]
	switch {
	case !ok:
		why = errors.New("are missing")
	case json.Unmarshal(raw, &t) != nil:
		why = errors.New("do not parse")
	default:
		switch why = k.checkTerms(t, lead); {
		case why == nil && hasAcc && t.older(acc):
			why = fmt.Errorf("are number %d, older than number %d this machine accepted (a rolled-back entry)", t.Seq, acc.Seq)
		case why == nil && hasLow && t.older(floor):
			why = fmt.Errorf("are number %d of the team made at %d, older than number %d of the team made at %d the lead's signed spawn was issued under (an earlier team's or revoked terms written in the bucket)",
				t.Seq, t.Created, floor.Seq, floor.Created)
		}
	}
	if why == nil {
		if err := k.keep(t, lead); err != nil {
			return Terms{}, false, err
		}
		if mine := termsOf(cfg); !mine.same(t) {
			k.s.report(k.team, rev, fmt.Sprintf("%s: the file's createdAt, modes, plan approval or team-allowed paths differ from what the lead signed: ignored, the lead's terms apply (someone who may write the bucket changed them; nats kv history %s %s shows who)",
				where, StateBucket(k.team), ConfigKey))
		}
		return t, true, nil
	}
	if !hasAcc {
		err := fmt.Errorf("%s %v, and this machine has accepted none before: refused; the lead's machine signs them again at its next change of the team", where, why)
		if hasLow {
			k.s.report(k.team, rev, err.Error())
		}
		return Terms{}, false, err
	}
	k.s.report(k.team, rev, fmt.Sprintf("%s %v: refused; the terms number %d this machine accepted apply", where, why, acc.Seq))
	return acc, true, nil
}

// report tells the store's problem reporter about team's file at revision
// rev, once per revision and reason.
func (s *Store) report(team string, rev uint64, reason string) {
	s.reportAt(team, StateBucket(team), ConfigKey, rev, reason)
}

// sealTerms signs cfg's permission fields as the terms after prev into
// cfg (the lead's machine).
func (k memberKeys) sealTerms(cfg *Config, prev Terms, lead ed25519.PrivateKey) (Terms, error) {
	t := termsOf(*cfg)
	t.Seq = 1
	if prev.Created == t.Created {
		t.Seq = prev.Seq + 1
	}
	t.Signature = signValue(termsContext, t.unsigned(), lead)
	raw, err := json.Marshal(t)
	if err != nil {
		return Terms{}, err
	}
	if cfg.Extra == nil {
		cfg.Extra = map[string]json.RawMessage{}
	}
	cfg.Extra[termsField] = raw
	return t, nil
}
