package team

import (
	"context"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/internal/atomicfile"
	"github.com/cohort-dev/cohort/internal/kvcas"
	"github.com/cohort-dev/cohort/remote"
)

// Member keys on NATS. A member's messages are checked with the key the
// lead signed for it, never with a key a member wrote for itself: anyone
// who may write the team's bucket could write one. The record, a
// KeyGrant, sits under its own key in the team's state bucket
// (GrantKey) and in keys/{member}.grant on every machine that accepted
// it. Decisions:
//
//   - Only the holder of the lead's private key signs: the lead's machine
//     (the lead and the teammates it runs there, which share its keys
//     directory) grants a local member's key when that member first signs.
//     Elsewhere, the lead's key is the one pinned from the signed spawn.
//   - A member on a worker makes its key there — the private half never
//     travels — and claims it (ClaimKey) with an HMAC made with the join
//     secret the lead put in the signed spawn; the lead (Admit) checks the
//     HMAC and signs. Whoever can read the spawn while it waits could claim
//     in the member's place: that is the trust the workers' stream already
//     needs (a reader of the jobs stream can take the job itself), and a
//     secret is good for one spawn only.
//   - Every grant carries a generation, one more than the member's last
//     on the lead's machine. A machine keeps the highest it accepted; a
//     grant that does not verify, or names another team or member, is
//     refused: an error naming the bucket and key, failing closed (the
//     member's messages are refused until the lead signs again).
//   - A newer grant replaces an older one (a teammate respawned on
//     another machine has a new key) at once, everywhere: no machine keeps
//     a member's public key between messages (jsmail.NewFreshKeys); each
//     message is checked with the grant in force in the bucket when it is
//     read (one round trip to the server), so the old key stops working
//     the moment the lead signs the new one, even on a machine that never
//     heard the member. A message the old key signed before the respawn
//     and read after it is refused too: the respawned member has to say
//     it again.
//   - A grant older than one this machine accepted (an entry put back),
//     or one that does not verify, is reported and passed over: the
//     highest this machine accepted stays in force (with none, the
//     member's messages are refused). A
//     teammate spawn carries the lead's grants of every member
//     (SpawnGrants; the worker takes them with PinGrants), so a machine
//     that never read a member's latest generation still knows it: an
//     attacker cannot roll a member back on a machine spawned after the
//     respawn. A machine spawned before the respawn learns of it in
//     order: it watches the grant entries from the moment it connects and
//     trusts a grant read at a revision only once its watch passed that
//     revision (grantwatch.go), so the new generation raised its floor
//     before an earlier one put back is read. What remains: someone who
//     may delete messages of the bucket's stream (not only write keys)
//     AND holds the old private key can delete the new grant's message
//     before a live machine's watch delivered it — moments after the
//     respawn — and be heard there with the old key. Closing that needs
//     NATS permissions on the bucket.

// GrantKey is the key of member's signed key entry in the team's state
// bucket (StateBucket).
func GrantKey(member string) string { return "member-key." + member }

// ClaimKey is the key of member's key claim in the team's state bucket.
func ClaimKey(member string) string { return "member-claim." + member }

const (
	grantContext = "cohort team member key v1\n"
	claimContext = "cohort team member key claim v1\n"
	// joinWait bounds how long a member on a worker waits for its lead to
	// sign its key.
	joinWait = 60 * time.Second
)

// KeyGrant is the lead's signed word that member's messages are signed
// with PublicKey (ed25519, base64), made on Machine, as generation
// Generation of that member's key.
type KeyGrant struct {
	Team       string `json:"team"`
	Member     string `json:"member"`
	PublicKey  string `json:"publicKey"`
	Machine    string `json:"machine"`
	Generation uint64 `json:"generation"`
	Signature  string `json:"signature,omitempty"`
}

func (g KeyGrant) unsigned() KeyGrant { g.Signature = ""; return g }

// keyClaim is a member's request, from the machine it runs on, that the
// lead sign its key; Proof is an HMAC-SHA256 with the spawn's join secret.
type keyClaim struct {
	Team      string `json:"team"`
	Member    string `json:"member"`
	PublicKey string `json:"publicKey"`
	Machine   string `json:"machine"`
	Proof     string `json:"proof,omitempty"`
}

func (c keyClaim) mac(secret []byte) []byte {
	c.Proof = ""
	b, _ := json.Marshal(c)
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(claimContext))
	h.Write(b)
	return h.Sum(nil)
}

// NewJoinSecret returns a fresh join secret (base64, 32 random bytes) for
// one teammate spawn.
func NewJoinSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

func decodeSecret(secret string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(secret)
	if err != nil || len(b) < 16 {
		return nil, errors.New("the join secret is not base64 of at least 16 bytes")
	}
	return b, nil
}

func machineName() string {
	h, err := os.Hostname()
	if err != nil {
		return "unknown-host"
	}
	return h
}

// ClaimKey makes member's key on this machine (a worker running a
// teammate spawn), claims it in the team's bucket with the spawn's join
// secret, and waits (up to a minute, or ctx) until the lead has signed it.
// The lead's key must be pinned first (PinKey).
func (s *Store) ClaimKey(ctx context.Context, team, member, secret string) error {
	sec, err := decodeSecret(secret)
	if err != nil {
		return fmt.Errorf("team %q: member %q: %w", team, member, err)
	}
	k, err := s.keysOf(team)
	if err != nil {
		return err
	}
	key, err := remote.LoadOrCreateKey(filepath.Join(k.dir, member+".key"))
	if err != nil {
		return err
	}
	c := keyClaim{Team: team, Member: member, PublicKey: b64(key.Public().(ed25519.PublicKey)), Machine: machineName()}
	c.Proof = base64.StdEncoding.EncodeToString(c.mac(sec))
	data, _ := json.Marshal(c)
	ctx, cancel := context.WithTimeout(ctx, joinWait)
	defer cancel()
	m, err := k.netOf(ctx)
	if err != nil {
		return err
	}
	if _, err := m.state.Put(ctx, ClaimKey(member), data); err != nil {
		return fmt.Errorf("team %q: claim %s's key: bucket %s: %w", team, member, StateBucket(team), err)
	}
	var last error
	for {
		g, found, err := k.current(ctx, member)
		if err == nil && found && g.PublicKey == c.PublicKey {
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			why := "is the lead running, and did it spawn " + member + " just now?"
			if last != nil {
				why = last.Error()
			}
			return fmt.Errorf("team %q: the lead did not sign %s's key within %s (bucket %s key %s): %s",
				team, member, joinWait, StateBucket(team), GrantKey(member), why)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Admit is the lead's side of ClaimKey: if member's claim in the team's
// bucket carries a proof made with secret, it signs the claimed key as the
// member's next generation (unless that key is the member's already). It
// reports whether the member's claimed key is signed now. A claim made
// with another secret (an older spawn's, or a forger's) is an error and
// is not signed; call again until the member's own claim is there.
func (s *Store) Admit(ctx context.Context, team, member, secret string) (bool, error) {
	if strings.EqualFold(member, LeadName) {
		return false, fmt.Errorf("team %q: %q is the lead's name: no member key is ever signed for it (the lead's key is its own, pinned by every member)", team, member)
	}
	sec, err := decodeSecret(secret)
	if err != nil {
		return false, fmt.Errorf("team %q: member %q: %w", team, member, err)
	}
	k, err := s.keysOf(team)
	if err != nil {
		return false, err
	}
	lead, ok := k.leadPrivate()
	if !ok {
		return false, fmt.Errorf("team %q: this machine does not hold the lead's key (%s), so it cannot admit %s", team, filepath.Join(k.dir, LeadName+".key"), member)
	}
	m, err := k.netOf(ctx)
	if err != nil {
		return false, err
	}
	e, err := kvcas.Get(ctx, m.nc, m.state, ClaimKey(member))
	if err != nil || e.Revision == 0 {
		return false, err
	}
	where := fmt.Sprintf("bucket %s key %s revision %d", StateBucket(team), ClaimKey(member), e.Revision)
	var c keyClaim
	if err := json.Unmarshal(e.Data, &c); err != nil {
		return false, fmt.Errorf("team %q: %s: the key claim does not parse: %v", team, where, err)
	}
	proof, _ := base64.StdEncoding.DecodeString(c.Proof)
	if c.Team != team || c.Member != member || !hmac.Equal(proof, c.mac(sec)) {
		return false, fmt.Errorf("team %q: %s: the key claim for %s was not made with this spawn's join secret; not signed (waiting for the spawned member's own claim)", team, where, member)
	}
	if _, err := decodePublicKey(team, member, c.PublicKey); err != nil {
		return false, err
	}
	cur, found, err := k.current(ctx, member)
	if err == nil && found && cur.PublicKey == c.PublicKey {
		return true, nil
	}
	g := KeyGrant{Team: team, Member: member, PublicKey: c.PublicKey, Machine: c.Machine, Generation: k.floor(member, cur) + 1}
	return true, k.grant(ctx, lead, g)
}

// keysOf returns the key finder of team on this machine.
func (s *Store) keysOf(team string) (memberKeys, error) {
	if _, err := s.Dir(team); err != nil {
		return memberKeys{}, err
	}
	return memberKeys{s: s, team: team, dir: s.keysDir(team)}, nil
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// netOf is the team's connection, bucket and mailbox.
func (k memberKeys) netOf(ctx context.Context) (*netMailbox, error) {
	local, err := k.s.readLocal(k.team)
	if err != nil {
		return nil, err
	}
	if local.NATS == "" {
		return nil, fmt.Errorf("team %q is on files: member keys are signed only on NATS", k.team)
	}
	m, err := k.s.net(ctx, k.team, local.NATS)
	if err != nil {
		return nil, netErr{err}
	}
	return m, nil
}

// netErr is a failure to reach or read the team's state on the server,
// which says nothing about what the state holds. Where a key is read to
// check a message, it becomes jsmail.ErrKeyUnavailable: the message waits
// and is tried again rather than being refused (an outage of the state
// bucket must delay members' messages, not lose them).
type netErr struct{ err error }

func (e netErr) Error() string { return e.err.Error() }
func (e netErr) Unwrap() error { return e.err }

// leadPublic is the key member entries are checked with: the lead's key
// pinned on this machine, or the lead's own key on the lead's machine.
func (k memberKeys) leadPublic() (ed25519.PublicKey, error) {
	if pin, err := os.ReadFile(filepath.Join(k.dir, LeadName+".pub")); err == nil {
		return decodePublicKey(k.team, LeadName, string(pin))
	}
	if key, ok := k.leadPrivate(); ok {
		return key.Public().(ed25519.PublicKey), nil
	}
	return nil, fmt.Errorf("team %q: this machine knows no key of the lead to check member keys with (no %s): a worker pins it from the lead's signed spawn",
		k.team, filepath.Join(k.dir, LeadName+".pub"))
}

// leadPrivate is the lead's private key, when this is the lead's machine:
// its key file is here and no lead key is pinned.
func (k memberKeys) leadPrivate() (ed25519.PrivateKey, bool) {
	if _, err := os.Stat(filepath.Join(k.dir, LeadName+".pub")); err == nil {
		return nil, false
	}
	path := filepath.Join(k.dir, LeadName+".key")
	if _, err := os.Stat(path); err != nil {
		return nil, false
	}
	key, err := remote.LoadOrCreateKey(path)
	return key, err == nil
}

// check verifies g as member's grant, signed by lead.
func (k memberKeys) check(g KeyGrant, member string, lead ed25519.PublicKey) error {
	switch {
	case !verifyValue(grantContext, g.unsigned(), g.Signature, lead):
		return errors.New("it does not verify with the lead's key: someone who may write the team's bucket changed it")
	case g.Team != k.team || g.Member != member:
		return fmt.Errorf("it is signed for member %q of team %q, not this one", g.Member, g.Team)
	}
	_, err := decodePublicKey(k.team, member, g.PublicKey)
	return err
}

func (k memberKeys) grantPath(member string) string { return filepath.Join(k.dir, member+".grant") }

// local is the highest grant of member this machine accepted from the
// team's present lead. One that does not verify with that lead's key is
// an earlier team's of the same name (this machine's keys directory is
// not the bucket: no one else writes it), so it counts for nothing and
// the next accepted grant replaces it.
func (k memberKeys) local(member string, lead ed25519.PublicKey) (KeyGrant, bool, error) {
	data, err := os.ReadFile(k.grantPath(member))
	if errors.Is(err, os.ErrNotExist) {
		return KeyGrant{}, false, nil
	}
	if err != nil {
		return KeyGrant{}, false, fmt.Errorf("team %q: %w", k.team, err)
	}
	var g KeyGrant
	if json.Unmarshal(data, &g) != nil || k.check(g, member, lead) != nil {
		return KeyGrant{}, false, nil
	}
	return g, true, nil
}

// current is member's grant in force: the bucket's, checked with the
// lead's key and against the highest generation this machine accepted
// (which it raises). An entry that does not verify, or is older, is an
// error naming the bucket and key; found is false when no grant exists.
func (k memberKeys) current(ctx context.Context, member string) (KeyGrant, bool, error) {
	lead, err := k.leadPublic()
	if err != nil {
		return KeyGrant{}, false, err
	}
	m, err := k.netOf(ctx)
	if err != nil {
		return KeyGrant{}, false, err
	}
	e, err := kvcas.Get(ctx, m.nc, m.state, GrantKey(member))
	if err != nil {
		return KeyGrant{}, false, netErr{fmt.Errorf("team %q: %w", k.team, err)}
	}
	// Every grant written before this one has raised the generation
	// accepted here first (grantwatch.go).
	if err := m.grants.await(ctx, e.Revision); err != nil {
		return KeyGrant{}, false, err
	}
	loc, hasLocal, err := k.local(member, lead)
	if err != nil {
		return KeyGrant{}, false, err
	}
	if e.Revision == 0 {
		return loc, hasLocal, nil
	}
	where := fmt.Sprintf("team %q: the key entry of member %s (bucket %s key %s revision %d)", k.team, member, StateBucket(k.team), GrantKey(member), e.Revision)
	var g KeyGrant
	var bad error
	if err := json.Unmarshal(e.Data, &g); err != nil {
		bad = fmt.Errorf("%s does not parse (%v); refused: the lead signs a new one when it spawns %s again", where, err, member)
	} else if err := k.check(g, member, lead); err != nil {
		bad = fmt.Errorf("%s is refused: %v; the lead signs a new one when it spawns %s again (nats kv history %s %s shows who wrote it)",
			where, err, member, StateBucket(k.team), GrantKey(member))
	}
	if bad != nil {
		if !hasLocal {
			return KeyGrant{}, false, bad
		}
		// The grant this machine accepted last stays in force.
		k.s.report(k.team, e.Revision, fmt.Sprintf("%v; generation %d accepted here stays in force", bad, loc.Generation))
		return loc, true, nil
	}
	switch {
	case hasLocal && g.Generation < loc.Generation:
		// A rolled-back entry: the newer grant this machine holds (seen
		// here, or carried by its spawn) stays in force.
		k.s.report(k.team, e.Revision, fmt.Sprintf("%s is refused: it is generation %d, older than generation %d this machine accepted: a replayed entry (a key rolled back); generation %d stays in force",
			where, g.Generation, loc.Generation, loc.Generation))
		return loc, true, nil
	case !hasLocal || g.Generation > loc.Generation:
		if err := k.raise(g, lead); err != nil {
			return KeyGrant{}, false, err
		}
	}
	return g, true, nil
}

// SpawnGrants are the lead-signed key grants (KeyGrant JSON) of team's
// members that this machine, the lead's, holds: a teammate spawn carries
// them, so that a worker that never saw a member's latest generation
// still refuses an older one put back in the bucket (PinGrants).
func (s *Store) SpawnGrants(team string) ([]string, error) {
	k, err := s.keysOf(team)
	if err != nil {
		return nil, err
	}
	lead, err := k.leadPublic()
	if err != nil {
		return nil, err
	}
	cfg, err := s.read(team)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range cfg.Members {
		if g, ok, err := k.local(m.Name, lead); err == nil && ok {
			data, _ := json.Marshal(g)
			out = append(out, string(data))
		}
	}
	return out, nil
}

// PinGrants takes the grants of a teammate spawn (SpawnGrants) as
// accepted on this machine, each checked with the lead's pinned key
// (PinKey first); one that does not verify is an error, one older than a
// grant accepted here is passed over.
func (s *Store) PinGrants(team string, grants []string) error {
	k, err := s.keysOf(team)
	if err != nil {
		return err
	}
	lead, err := k.leadPublic()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(k.dir, 0o700); err != nil {
		return err
	}
	for i, text := range grants {
		var g KeyGrant
		if err := json.Unmarshal([]byte(text), &g); err != nil {
			return fmt.Errorf("team %q: the spawn's key grant %d does not parse: %v", team, i+1, err)
		}
		if err := ValidateName(g.Member); err != nil {
			return fmt.Errorf("team %q: the spawn's key grant %d: %w", team, i+1, err)
		}
		if err := k.check(g, g.Member, lead); err != nil {
			return fmt.Errorf("team %q: the spawn's key grant of %s is refused: %v", team, g.Member, err)
		}
		if err := k.raise(g, lead); err != nil {
			return err
		}
	}
	return nil
}

// floor is the highest generation of member's key known here, cur being
// what current returned.
func (k memberKeys) floor(member string, cur KeyGrant) uint64 {
	n := cur.Generation
	if lead, err := k.leadPublic(); err == nil {
		if loc, ok, _ := k.local(member, lead); ok {
			n = max(n, loc.Generation)
		}
	}
	return n
}

// grant signs g with the lead's key and records it here, then in the
// bucket.
func (k memberKeys) grant(ctx context.Context, lead ed25519.PrivateKey, g KeyGrant) error {
	g.Signature = signValue(grantContext, g.unsigned(), lead)
	data, _ := json.Marshal(g)
	if err := os.MkdirAll(k.dir, 0o700); err != nil {
		return err
	}
	if err := atomicfile.Write(k.grantPath(g.Member), data, 0o600); err != nil {
		return err
	}
	m, err := k.netOf(ctx)
	if err != nil {
		return err
	}
	if _, err := m.state.Put(ctx, GrantKey(g.Member), data); err != nil {
		return fmt.Errorf("team %q: sign %s's key: bucket %s: %w", k.team, g.Member, StateBucket(k.team), err)
	}
	return nil
}
