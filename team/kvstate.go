package team

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/cohort-dev/cohort/internal/atomicfile"
	"github.com/cohort-dev/cohort/internal/jsonfile"
	"github.com/cohort-dev/cohort/internal/kvcas"
	"github.com/cohort-dev/cohort/tasklist"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// On NATS a team's shared state is one key-value bucket: the team file
// (ConfigKey, the file's JSON) and the task list (tasklist.KVKey).
const ConfigKey = "config"

// StateBucket names the key-value bucket of team name's state on NATS.
func StateBucket(name string) string { return "COHORT_TEAM_" + name + "_STATE" }

// netTimeout bounds a round trip to the team's server made without a
// context of the caller's.
const netTimeout = 10 * time.Second

func openState(ctx context.Context, nc *nats.Conn, name string, replicas int) (jetstream.KeyValue, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: StateBucket(name), Replicas: max(replicas, 1), Storage: jetstream.FileStorage, History: stateHistory,
		Description: "cohort team " + name + ": team file and task list",
	})
	if err != nil {
		return nil, fmt.Errorf("bucket %s: %w", StateBucket(name), err)
	}
	return kv, nil
}

// parseNet reads the team file as JetStream holds it. An entry that does
// not parse is an error naming the bucket, key and revision; nothing
// overwrites it.
func (s *Store) parseNet(name string, e kvcas.Entry) (Config, error) {
	label := fmt.Sprintf("team %q: JetStream bucket %s key %s revision %d", name, StateBucket(name), ConfigKey, e.Revision)
	cfg, err := ParseConfig(label, e.Data)
	if err == nil {
		err = cfg.validate(name)
	}
	if err != nil {
		var fe *jsonfile.Error
		if !errors.As(err, &fe) {
			fe = &jsonfile.Error{Path: label, Err: err}
		}
		fe.Hint = "the team file on the server is kept as it is: put back a good revision (nats kv history " + StateBucket(name) + " " + ConfigKey + ")"
		return Config{}, fe
	}
	return cfg, nil
}

// readNet returns the team file as the server holds it; local (the file on
// this machine, which names the server) stands in until the server has one.
func (s *Store) readNet(name string, local Config) (Config, error) {
	ctx, cancel := context.WithTimeout(context.Background(), netTimeout)
	defer cancel()
	m, err := s.net(ctx, name, local.NATS)
	if err != nil {
		return Config{}, netErr{err}
	}
	e, err := kvcas.Get(ctx, m.nc, m.state, ConfigKey)
	if err != nil {
		return Config{}, netErr{fmt.Errorf("team %q: %w", name, err)}
	}
	cfg := local
	if e.Revision != 0 {
		if cfg, err = s.parseNet(name, e); err != nil {
			return Config{}, err
		}
	}
	k := memberKeys{s: s, team: name, dir: s.keysDir(name)}
	t, known, err := k.terms(cfg, e.Revision)
	if err != nil {
		return Config{}, err
	}
	if !known {
		t = Terms{}
	}
	t.apply(&cfg)
	return cfg, nil
}

// updateNet is Update for a team on NATS: a compare-and-set of the team
// file on the server, so members and allowed paths are the same for every
// machine; the file here is rewritten as a copy afterwards.
func (s *Store) updateNet(ctx context.Context, name string, local Config, fn func(*Config) error) (Config, error) {
	m, err := s.net(ctx, name, local.NATS)
	if err != nil {
		return Config{}, err
	}
	var out Config
	var data []byte
	var sealed *Terms
	k := memberKeys{s: s, team: name, dir: s.keysDir(name)}
	lead, leadMachine := k.leadPrivate()
	_, _, err = kvcas.Update(ctx, m.nc, m.state, ConfigKey, func(e kvcas.Entry) ([]byte, bool, error) {
		cfg := local.Clone()
		if e.Revision != 0 {
			var err error
			if cfg, err = s.parseNet(name, e); err != nil {
				return nil, false, err
			}
		}
		// The permission fields are the lead's terms, whatever the entry
		// says beside them (terms.go).
		prev, known, err := k.terms(cfg, e.Revision)
		if err != nil && !leadMachine {
			return nil, false, err
		}
		if !known {
			prev = Terms{}
			if leadMachine {
				// No terms yet (a team of an earlier version): the lead
				// signs what its own copy of the file says.
				prev = termsOf(local)
			}
		}
		prev.apply(&cfg)
		before := termsOf(cfg)
		if err := fn(&cfg); err != nil {
			return nil, false, err
		}
		if err := cfg.validate(name); err != nil {
			return nil, false, fmt.Errorf("team %q: update would make the file invalid: %w", name, err)
		}
		sealed = nil
		switch after := termsOf(cfg); {
		case leadMachine && (err != nil || !known || prev.Seq == 0 || !after.same(before) || !after.same(prev)):
			t, err := k.sealTerms(&cfg, prev, lead)
			if err != nil {
				return nil, false, err
			}
			sealed = &t
		case !before.keeps(after):
			return nil, false, fmt.Errorf("team %q: only the lead's machine may change a member's mode, its plan approval or the team-allowed paths (they are the lead's signed terms)", name)
		case known:
			raw, _ := json.Marshal(prev)
			cfg.Extra[termsField] = raw // the terms in force, as signed
		}
		out = cfg
		data, err = MarshalConfig(cfg)
		return data, err == nil, err
	})
	if err != nil {
		return Config{}, err
	}
	if sealed != nil {
		if lp, err := k.leadPublic(); err == nil {
			if err := k.keep(*sealed, lp); err != nil {
				return Config{}, err
			}
		}
	}
	if err := atomicfile.Write(s.configPath(name), data, 0o600); err != nil {
		return Config{}, fmt.Errorf("team %q: write the copy of the team file %s: %w", name, ConfigFile, err)
	}
	return out.Clone(), nil
}

// seedNet puts a new team's file on the server and empties its task list
// there: a team made anew under an old name starts clean, as its new
// directory does on files.
func (s *Store) seedNet(ctx context.Context, m *netMailbox, cfg Config) error {
	// The creator is the lead: its key signs the team's terms (terms.go).
	if _, err := s.LeadKey(cfg.Name); err != nil {
		return err
	}
	k := memberKeys{s: s, team: cfg.Name, dir: s.keysDir(cfg.Name)}
	lead, ok := k.leadPrivate()
	if !ok {
		return fmt.Errorf("team %q: this machine cannot sign the team's terms: a lead key is pinned in %s", cfg.Name, k.dir)
	}
	cfg = cfg.Clone()
	t, err := k.sealTerms(&cfg, Terms{}, lead)
	if err != nil {
		return err
	}
	if err := os.Remove(k.termsPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if err := k.keep(t, lead.Public().(ed25519.PublicKey)); err != nil {
		return err
	}
	data, err := MarshalConfig(cfg)
	if err != nil {
		return err
	}
	if _, err := m.state.Put(ctx, ConfigKey, data); err != nil {
		return fmt.Errorf("bucket %s: %w", StateBucket(cfg.Name), err)
	}
	if err := m.state.Delete(ctx, tasklist.KVKey); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("bucket %s: %w", StateBucket(cfg.Name), err)
	}
	return nil
}

// tasksNet is the task list of a team on NATS.
func (s *Store) tasksNet(name string, local Config) (*tasklist.List, error) {
	ctx, cancel := context.WithTimeout(context.Background(), netTimeout)
	defer cancel()
	m, err := s.net(ctx, name, local.NATS)
	if err != nil {
		return nil, err
	}
	// The team's creation time binds signed tasks to this team: it is the
	// lead's signed terms' (readNet), not the copy's here, which Join took
	// from the server's unsigned field before it knew the lead's key.
	cfg, err := s.readNet(name, local)
	if err != nil {
		return nil, err
	}
	signer := &taskSigner{k: memberKeys{s: s, team: name, dir: s.keysDir(name)}, created: cfg.CreatedAt.UnixMilli()}
	return tasklist.OpenKV(tasklist.KVConfig{Conn: m.nc, KV: m.state, Now: s.cfg.Now, Signer: signer})
}

// Join makes team name, led on another machine, known here: it reads the
// team file from server and writes it as this machine's copy (its "nats"
// naming server), with an empty tasks/ beside it. From then on the team's
// members, allowed paths, task list and mailboxes are the server's. A team
// the server does not hold is ErrNotFound; a local team of that name on
// files, or on another server, is ErrExists.
func (s *Store) Join(ctx context.Context, name, server string) (*Team, error) {
	dir, err := s.Dir(name)
	if err != nil {
		return nil, err
	}
	if local, err := s.readLocal(name); err == nil && local.NATS != server {
		return nil, fmt.Errorf("team join %q: %w here (%s) on %s; delete it first or join under its server", name, ErrExists, dir, orFiles(local.NATS))
	}
	m, err := s.net(ctx, name, server)
	if err != nil {
		return nil, err
	}
	e, err := kvcas.Get(ctx, m.nc, m.state, ConfigKey)
	if err != nil {
		return nil, fmt.Errorf("team join %q: %w", name, err)
	}
	if e.Revision == 0 {
		return nil, fmt.Errorf("team join %q: %w on %s (bucket %s has no %s): the lead creates the team first", name, ErrNotFound, server, StateBucket(name), ConfigKey)
	}
	cfg, err := s.parseNet(name, e)
	if err != nil {
		return nil, err
	}
	cfg.NATS = server
	if err := os.MkdirAll(filepath.Join(dir, TasksDir), 0o700); err != nil {
		return nil, fmt.Errorf("team join %q: %w", name, err)
	}
	data, err := MarshalConfig(cfg)
	if err != nil {
		return nil, err
	}
	if err := atomicfile.Write(s.configPath(name), data, 0o600); err != nil {
		return nil, fmt.Errorf("team join %q: %w", name, err)
	}
	return &Team{Config: cfg, Dir: dir}, nil
}

func orFiles(server string) string {
	if server == "" {
		return "files"
	}
	return server
}
