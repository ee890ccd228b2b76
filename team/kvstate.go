package team

import (
	"context"
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
		Bucket: StateBucket(name), Replicas: max(replicas, 1), Storage: jetstream.FileStorage,
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
		return Config{}, err
	}
	e, err := kvcas.Get(ctx, m.nc, m.state, ConfigKey)
	if err != nil {
		return Config{}, fmt.Errorf("team %q: %w", name, err)
	}
	if e.Revision == 0 {
		return local, nil
	}
	return s.parseNet(name, e)
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
	_, _, err = kvcas.Update(ctx, m.nc, m.state, ConfigKey, func(e kvcas.Entry) ([]byte, bool, error) {
		cfg := local.Clone()
		if e.Revision != 0 {
			var err error
			if cfg, err = s.parseNet(name, e); err != nil {
				return nil, false, err
			}
		}
		if err := fn(&cfg); err != nil {
			return nil, false, err
		}
		if err := cfg.validate(name); err != nil {
			return nil, false, fmt.Errorf("team %q: update would make the file invalid: %w", name, err)
		}
		out = cfg
		data, err = MarshalConfig(cfg)
		return data, err == nil, err
	})
	if err != nil {
		return Config{}, err
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
	return tasklist.OpenKV(tasklist.KVConfig{Conn: m.nc, KV: m.state, Now: s.cfg.Now})
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
