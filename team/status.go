package team

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/cohort-dev/cohort/internal/atomicfile"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// StatusDir is the directory of a team on files where each member
// publishes its status ({member}.json).
const StatusDir = "status"

// StatusBoard is where a team's members publish their status (what
// package teammate writes: state, heartbeat, spend) and read each
// other's. A team on files keeps it in status/; a team on NATS in a
// key-value bucket, so that a member on another machine is seen alive or
// dead the same way.
type StatusBoard interface {
	// Put publishes member's status.
	Put(ctx context.Context, member string, data []byte) error
	// Get reads member's status; ok is false when it has published none
	// (or, on NATS, when all a fresh reader finds is one entry put above
	// an erasure: kvboard.go).
	// Seen is, on a board whose writers are on other machines (their
	// clocks are not this one's), when this reader first saw that version
	// less how much later the server stored it than it was signed (a
	// version hidden and put back is as old as when it was written; a
	// newer one of the same signer heard published counts from when it
	// was signed, or heard if earlier: kvboard.go, kvheard.go), and zero
	// on files, whose writers share this clock.
	Get(ctx context.Context, member string) (data []byte, seen time.Time, ok bool, err error)
}

// FileStatuses is the status board of the team directory dir.
func FileStatuses(dir string) StatusBoard { return fileBoard(filepath.Join(dir, StatusDir)) }

type fileBoard string

func (b fileBoard) path(member string) string { return filepath.Join(string(b), member+".json") }

func (b fileBoard) Put(_ context.Context, member string, data []byte) error {
	if err := os.MkdirAll(string(b), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(b.path(member), data, 0o600)
}

func (b fileBoard) Get(_ context.Context, member string) ([]byte, time.Time, bool, error) {
	data, err := os.ReadFile(b.path(member))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, time.Time{}, false, nil
	}
	if err != nil {
		return nil, time.Time{}, false, err
	}
	return data, time.Time{}, true, nil
}

// Statuses returns team name's status board: its status/ directory, or
// the bucket P_TEAM_T_STATUS on the NATS server its file names.
func (s *Store) Statuses(name string) (StatusBoard, error) {
	dir, err := s.Dir(name)
	if err != nil {
		return nil, err
	}
	cfg, err := s.read(name)
	if err != nil {
		return nil, err
	}
	if cfg.NATS == "" {
		return FileStatuses(dir), nil
	}
	m, err := s.net(context.Background(), name, cfg.NATS)
	if err != nil {
		return nil, err
	}
	return m.status, nil
}

// StatusBucket opens (making it if needed) the key-value bucket that
// holds team name's statuses on the connection's JetStream.
func StatusBucket(ctx context.Context, nc *nats.Conn, name string, replicas int) (jetstream.KeyValue, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	bucket := "COHORT_TEAM_" + name + "_STATUS" // as package jsmail names the team's stream
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: bucket, History: StatusHistory, Storage: jetstream.FileStorage,
		Replicas: max(replicas, 1)})
	if err != nil {
		return nil, fmt.Errorf("team %q: status bucket %s: %w", name, bucket, err)
	}
	return kv, nil
}

func (s *Store) now() time.Time {
	if s.cfg.Now != nil {
		return s.cfg.Now()
	}
	return time.Now()
}
