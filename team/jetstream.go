package team

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/mailbox/jsmail"
	"github.com/cohort-dev/cohort/remote"

	"github.com/nats-io/nats.go"
)

// KeysDir is where a team directory keeps its members' signing keys,
// one {member}.key a member (remote's key format, mode 0600).
const KeysDir = "keys"

// netMailbox is one team's JetStream mailbox and its connection.
type netMailbox struct {
	server string
	nc     *nats.Conn
	tr     *jsmail.Transport
	status *kvBoard // the status board, opened on first use (status.go)
}

// jetstream returns team name's JetStream mailbox on server, connecting
// on first use. A server that cannot be reached is an error naming it and
// what to do: the team never falls back to files.
func (s *Store) jetstream(ctx context.Context, name, server string) (mailbox.Transport, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.nets[name]; ok && m.server == server {
		return m.tr, nil
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
	tr, err := jsmail.Open(ctx, jsmail.Config{Conn: nc, Team: name, Lead: LeadName, Now: mc.Now,
		Keys:      jsmail.NewKeysFrom(memberKeys{s: s, team: name, dir: filepath.Join(s.cfg.Root, name, KeysDir)}),
		OnProblem: mc.OnProblem, Logger: mc.Logger})
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("team %q: JetStream on %s: %w (is JetStream enabled on that server?)", name, server, err)
	}
	if old, ok := s.nets[name]; ok {
		old.nc.Close()
	}
	if s.nets == nil {
		s.nets = map[string]*netMailbox{}
	}
	s.nets[name] = &netMailbox{server: server, nc: nc, tr: tr}
	return tr, nil
}

// Close closes the connections of the teams whose mailboxes are on NATS.
// The inboxes opened from them must be closed first.
func (s *Store) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for name, m := range s.nets {
		m.nc.Close()
		delete(s.nets, name)
	}
}

// memberKeys finds members' keys in the team's keys directory: a member's
// private key is made on first use by the process that speaks for it, and
// its public half is what every other process checks its messages with.
// Only the team file's members have keys: a name that is not among them
// can neither sign nor be trusted. This holds on one machine, or where the
// directory is shared; members on machines of their own need their public
// keys carried in the team file (not done yet).
type memberKeys struct {
	s    *Store
	team string
	dir  string
}

func (k memberKeys) member(name string) error {
	cfg, err := k.s.read(k.team)
	if err != nil {
		return err
	}
	if cfg.memberIndex(name) < 0 {
		return fmt.Errorf("team %q: %w %q", k.team, ErrNoMember, name)
	}
	return nil
}

func (k memberKeys) PrivateKey(member string) (ed25519.PrivateKey, error) {
	if err := k.member(member); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(k.dir, 0o700); err != nil {
		return nil, err
	}
	return remote.LoadOrCreateKey(filepath.Join(k.dir, member+".key"))
}

func (k memberKeys) PublicKey(member string) (ed25519.PublicKey, error) {
	if err := k.member(member); err != nil {
		return nil, err
	}
	path := filepath.Join(k.dir, member+".key")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no key for member %q in %s", member, k.dir)
	}
	key, err := remote.LoadOrCreateKey(path)
	if err != nil {
		return nil, err
	}
	return key.Public().(ed25519.PublicKey), nil
}
