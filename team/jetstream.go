package team

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/internal/atomicfile"
	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/mailbox/jsmail"
	"github.com/cohort-dev/cohort/remote"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// KeysDir is where a team directory keeps its members' signing keys,
// one {member}.key a member (remote's key format, mode 0600).
const KeysDir = "keys"

// netMailbox is one team's JetStream mailbox, its state bucket (the team
// file and the task list, kvstate.go) and its connection.
type netMailbox struct {
	server string
	nc     *nats.Conn
	tr     *jsmail.Transport
	state  jetstream.KeyValue
	status *kvBoard    // the members' statuses (status.go)
	grants *grantWatch // the member key grants as written (grantwatch.go)
}

func (m *netMailbox) close() {
	m.grants.stop()
	m.nc.Close()
}

// jetstream returns team name's JetStream mailbox on server, connecting
// on first use.
func (s *Store) jetstream(ctx context.Context, name, server string) (mailbox.Transport, error) {
	m, err := s.net(ctx, name, server)
	if err != nil {
		return nil, err
	}
	return m.tr, nil
}

// net returns team name's connection to server with its mailbox and
// state bucket, connecting on first use. A server that cannot be reached
// is an error naming it and what to do: the team never falls back to
// files.
func (s *Store) net(ctx context.Context, name, server string) (*netMailbox, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.nets[name]; ok && m.server == server {
		return m, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	nc, err := nats.Connect(server, nats.Timeout(5*time.Second), nats.MaxReconnects(-1),
		nats.ReconnectWait(250*time.Millisecond), nats.Name("cohort team "+name))
	if err != nil {
		return nil, fmt.Errorf("team %q: its mailboxes are on the NATS server %s (\"nats\" in %s), which cannot be reached: %v; start that server, or correct \"nats\" in the team file (the team does not fall back to files)",
			name, server, s.configPath(name), err)
	}
	mc := s.cfg.Mailbox
	tr, err := jsmail.Open(ctx, jsmail.Config{Conn: nc, Team: name, Lead: LeadName, Now: mc.Now, Replicas: s.cfg.Replicas,
		Keys:     jsmail.NewFreshKeys(memberKeys{s: s, team: name, dir: s.keysDir(name)}),
		StateDir: filepath.Join(s.keysDir(name), "inbox-seen"), OnProblem: mc.OnProblem, Logger: mc.Logger})
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("team %q: JetStream on %s: %w (is JetStream enabled on that server?)", name, server, err)
	}
	state, err := openState(ctx, nc, name, s.cfg.Replicas)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("team %q: JetStream on %s: %w", name, server, err)
	}
	status, err := StatusBucket(ctx, nc, name, s.cfg.Replicas)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("team %q: JetStream on %s: %w", name, server, err)
	}
	keys := memberKeys{s: s, team: name, dir: s.keysDir(name)}
	grants, err := watchGrants(state, keys)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("team %q: JetStream on %s: %w", name, server, err)
	}
	if old, ok := s.nets[name]; ok {
		old.close()
	}
	if s.nets == nil {
		s.nets = map[string]*netMailbox{}
	}
	board := &kvBoard{kv: status, nc: nc, now: s.now, keys: keys,
		accepted: map[string]acceptedStatus{}, stamps: map[string][]stamped{}, scanned: map[string]uint64{}, scannedAt: map[string]time.Time{}, erasedAt: map[string]int64{}}
	if err := board.listen(); err != nil {
		grants.stop()
		nc.Close()
		return nil, fmt.Errorf("team %q: JetStream on %s: %w", name, server, err)
	}
	m := &netMailbox{server: server, nc: nc, tr: tr, state: state, grants: grants, status: board}
	s.nets[name] = m
	return m, nil
}

// Close closes the connections of the teams whose mailboxes are on NATS.
// The inboxes opened from them must be closed first.
func (s *Store) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, m := range s.nets {
		m.close()
		delete(s.nets, name)
	}
}

// memberKeys finds members' keys. A member's private key is made on
// first use, in the team's keys directory, by the process that speaks for
// it. On files every key is on this machine. On NATS (memberkey.go) the
// lead's public key is the one pinned here (keys/team-lead.pub: a
// teammate on a worker pins it from the signed spawn) or, on the lead's
// machine, the lead's own; any other member's is the one its KeyGrant,
// signed by the lead, names — never one a member or anyone else wrote in
// the team's bucket unsigned. Only the team file's members have keys: a
// name that is not among them can neither sign nor be trusted.
type memberKeys struct {
	s    *Store
	team string
	dir  string
}

func (k memberKeys) member(name string) (Member, bool, error) {
	cfg, err := k.s.read(k.team)
	if err != nil {
		return Member{}, false, err
	}
	i := cfg.memberIndex(name)
	if i < 0 {
		return Member{}, false, fmt.Errorf("team %q: %w %q", k.team, ErrNoMember, name)
	}
	return cfg.Members[i], cfg.NATS != "", nil
}

// PrivateKey is member's key, made here on first use. On NATS a member
// other than the lead signs only with a key the lead signed: on the lead's
// machine that grant is made here; elsewhere it came through ClaimKey.
func (k memberKeys) PrivateKey(member string) (ed25519.PrivateKey, error) {
	_, onNATS, err := k.member(member)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(k.dir, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(k.dir, member+".key")
	lead, isLeadMachine := k.leadPrivate()
	if onNATS && member != LeadName && !isLeadMachine {
		if _, err := os.Stat(path); err != nil {
			return nil, fmt.Errorf("team %q: this machine has no key for member %s: a teammate on another machine gets one when its lead spawns it there (cohort worker)", k.team, member)
		}
	}
	key, err := remote.LoadOrCreateKey(path)
	if err != nil || !onNATS || member == LeadName {
		return key, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), netTimeout)
	defer cancel()
	pub := b64(key.Public().(ed25519.PublicKey))
	cur, found, err := k.current(ctx, member)
	if err == nil && found && cur.PublicKey == pub {
		return key, nil
	}
	if !isLeadMachine {
		if err == nil {
			err = fmt.Errorf("the lead has not signed this machine's key of %s (bucket %s key %s)", member, StateBucket(k.team), GrantKey(member))
		}
		return nil, fmt.Errorf("member %s cannot sign: %w", member, err)
	}
	g := KeyGrant{Team: k.team, Member: member, PublicKey: pub, Machine: machineName(), Generation: k.floor(member, cur) + 1}
	if err := k.grant(ctx, lead, g); err != nil {
		return nil, err
	}
	return key, nil
}

// PublicKey is the key member's messages are checked with. A failure to
// reach the server is jsmail.ErrKeyUnavailable (netErr).
func (k memberKeys) PublicKey(member string) (ed25519.PublicKey, error) {
	pub, err := k.publicKey(member)
	if errors.As(err, new(netErr)) {
		return nil, fmt.Errorf("%w: %w", jsmail.ErrKeyUnavailable, err)
	}
	return pub, err
}

func (k memberKeys) publicKey(member string) (ed25519.PublicKey, error) {
	_, onNATS, err := k.member(member)
	if err != nil {
		return nil, err
	}
	if onNATS && member == LeadName {
		return k.leadPublic()
	}
	if onNATS {
		ctx, cancel := context.WithTimeout(context.Background(), netTimeout)
		defer cancel()
		g, found, err := k.current(ctx, member)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, fmt.Errorf("team %q: the lead has signed no key for member %s (bucket %s has no %s)", k.team, member, StateBucket(k.team), GrantKey(member))
		}
		return decodePublicKey(k.team, member, g.PublicKey)
	}
	path := filepath.Join(k.dir, member+".key")
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("no key for member %q in %s", member, k.dir)
	}
	key, err := remote.LoadOrCreateKey(path)
	if err != nil {
		return nil, err
	}
	return key.Public().(ed25519.PublicKey), nil
}

func decodePublicKey(team, member, text string) (ed25519.PublicKey, error) {
	pub, err := base64.StdEncoding.DecodeString(strings.TrimSpace(text))
	if err != nil || len(pub) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("team %q: member %q: its public key is not a base64 ed25519 key", team, member)
	}
	return ed25519.PublicKey(pub), nil
}

// PinKey makes pub the only key member's messages in team are checked
// with on this machine (keys/{member}.pub), whatever the team file says:
// a teammate on a worker pins its lead's key, which came in the lead's
// signed spawn.
func (s *Store) PinKey(team, member, pub string) error {
	if _, err := decodePublicKey(team, member, pub); err != nil {
		return err
	}
	if err := ValidateName(member); err != nil {
		return err
	}
	if _, err := s.Dir(team); err != nil {
		return err
	}
	dir := s.keysDir(team)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, member+".pub"), []byte(pub+"\n"), 0o600)
}

// keysDir is where team's members' keys are on this machine.
func (s *Store) keysDir(team string) string {
	if s.cfg.KeysRoot != "" {
		return filepath.Join(s.cfg.KeysRoot, team)
	}
	return filepath.Join(s.cfg.Root, team, KeysDir)
}

// LeadKey returns the public half (base64) of the key the lead of team
// signs its messages with, made on first use: a remote teammate's spawn
// carries it, for the worker to pin (PinKey).
func (s *Store) LeadKey(team string) (string, error) {
	if _, err := s.Dir(team); err != nil {
		return "", err
	}
	dir := s.keysDir(team)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	key, err := remote.LoadOrCreateKey(filepath.Join(dir, LeadName+".key"))
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(key.Public().(ed25519.PublicKey)), nil
}

// Spawn is what a worker pins of a teammate spawn it runs (PinSpawn): the
// highest permission mode the member may take there (the spawn's, as the
// worker's policy capped it) and whether its plan needs the lead's
// approval. The worker's keys directory holds it, which no one else
// writes and the sandbox hides from every command.
type Spawn struct {
	Ceiling          string `json:"ceiling"`
	PlanModeRequired bool   `json:"planModeRequired,omitempty"`
}

func (s *Store) spawnPath(team, member string) string {
	return filepath.Join(s.keysDir(team), member+".spawn")
}

// PinSpawn records sp for member of team on this machine.
func (s *Store) PinSpawn(team, member string, sp Spawn) error {
	if err := ValidateName(member); err != nil {
		return err
	}
	if _, err := s.Dir(team); err != nil {
		return err
	}
	if err := os.MkdirAll(s.keysDir(team), 0o700); err != nil {
		return err
	}
	data, _ := json.Marshal(sp)
	return atomicfile.Write(s.spawnPath(team, member), data, 0o600)
}

// Spawned is what PinSpawn recorded for member of team here; ok is false
// when this machine runs member from no spawn (the lead's machine).
func (s *Store) Spawned(team, member string) (sp Spawn, ok bool, err error) {
	if err := ValidateName(member); err != nil {
		return Spawn{}, false, err
	}
	path := s.spawnPath(team, member)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Spawn{}, false, nil
	}
	if err == nil {
		err = json.Unmarshal(data, &sp)
	}
	if err != nil {
		return Spawn{}, false, fmt.Errorf("team %q: member %s's spawn %s: %v (the worker writes it when it takes the spawn)", team, member, path, err)
	}
	return sp, true, nil
}
