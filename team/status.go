package team

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
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
	// Get reads member's status; ok is false when it has published none.
	// Seen is when this reader first saw that version of it on a board
	// whose writers are on other machines (their clocks are not this
	// one's), and zero on files, whose writers share this clock.
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
	kv, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: bucket, History: 1, Storage: jetstream.FileStorage,
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

// kvBoard is a status board in a key-value bucket. Get reports when this
// reader first saw each revision, so that a heartbeat's age is measured on
// the reader's clock alone: two machines' clocks may disagree by more than
// a heartbeat.
//
// Any client of the server may write the bucket, so each status is
// signed (signedStatus): by the member it is about, with the key the lead
// granted it, or by the lead (the lead's machine publishes for the
// teammates it runs, and marks a silent member dead). A status is read
// only as its signer's, and only if its signer's clock stamp is later
// than the last one this reader accepted from that signer for that member
// (an old signed status put back is refused). A status that fails either
// check is reported (the store's Mailbox.OnProblem: the lead, on its
// machine) and passed over: the last status this reader accepted for the
// member stands, or none.
type kvBoard struct {
	kv   jetstream.KeyValue
	now  func() time.Time
	keys memberKeys

	mu       sync.Mutex
	seen     map[string]seenRev
	accepted map[string]acceptedStatus // by member
	last     map[string]int64          // by member and signer: the latest stamp accepted
	stamp    int64                     // the last stamp this process signed
}

type seenRev struct {
	rev uint64
	at  time.Time
}

type acceptedStatus struct {
	rev  uint64
	data []byte
}

const statusContext = "cohort team status v1\n"

// signedStatus is a status as the status bucket holds it.
type signedStatus struct {
	Team   string          `json:"team"`
	Member string          `json:"member"`
	By     string          `json:"by"`
	Stamp  int64           `json:"stamp"` // the signer's clock, ns; one more at least at each put
	Status json.RawMessage `json:"status"`
	// Signature is By's, with its key in force (the lead's, or the grant).
	Signature string `json:"signature,omitempty"`
}

func (v signedStatus) unsigned() signedStatus { v.Signature = ""; return v }

func (b *kvBoard) Put(ctx context.Context, member string, data []byte) error {
	by, key := member, ed25519.PrivateKey(nil)
	if lead, ok := b.keys.leadPrivate(); ok {
		by, key = LeadName, lead
	} else {
		var err error
		if key, err = b.keys.PrivateKey(member); err != nil {
			return fmt.Errorf("team %q: sign %s's status: %w", b.keys.team, member, err)
		}
	}
	b.mu.Lock()
	b.stamp = max(b.stamp+1, b.now().UnixNano())
	v := signedStatus{Team: b.keys.team, Member: member, By: by, Stamp: b.stamp, Status: data}
	b.mu.Unlock()
	v.Signature = signValue(statusContext, v.unsigned(), key)
	env, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = b.kv.Put(ctx, member, env)
	return err
}

func (b *kvBoard) Get(ctx context.Context, member string) ([]byte, time.Time, bool, error) {
	e, err := b.kv.Get(ctx, member)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return b.fallback(member)
	}
	if err != nil {
		return nil, time.Time{}, false, err
	}
	data, err := b.check(member, e.Revision(), e.Value())
	if err != nil {
		if errors.As(err, new(netErr)) {
			return nil, time.Time{}, false, err
		}
		b.keys.s.reportAt(b.keys.team, b.kv.Bucket(), member, e.Revision(), fmt.Sprintf("team %q: the status of %s (bucket %s key %s revision %d) %v: ignored; the last status this machine accepted stands (nats kv history %s %s shows who wrote it)",
			b.keys.team, member, b.kv.Bucket(), member, e.Revision(), err, b.kv.Bucket(), member))
		return b.fallback(member)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.seen[member]
	if !ok || s.rev != e.Revision() {
		s = seenRev{rev: e.Revision(), at: b.now()}
		b.seen[member] = s
	}
	return data, s.at, true, nil
}

// check returns the status in env, member's at revision rev, if its
// signature and stamp hold.
func (b *kvBoard) check(member string, rev uint64, env []byte) ([]byte, error) {
	b.mu.Lock()
	if a, ok := b.accepted[member]; ok && a.rev == rev {
		b.mu.Unlock()
		return a.data, nil
	}
	b.mu.Unlock()
	var v signedStatus
	if err := json.Unmarshal(env, &v); err != nil || v.Signature == "" {
		return nil, errors.New("is not signed")
	}
	if v.Team != b.keys.team || v.Member != member || v.By != member && v.By != LeadName {
		return nil, fmt.Errorf("is signed by %s for member %s of team %q: only the member itself or the lead may publish it", v.By, v.Member, v.Team)
	}
	pub, err := b.keys.publicKey(v.By)
	if err != nil {
		return nil, err
	}
	if !verifyValue(statusContext, v.unsigned(), v.Signature, pub) {
		return nil, fmt.Errorf("does not verify with the key of %s in force", v.By)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	who := member + "\x00" + v.By
	if last, ok := b.last[who]; ok && v.Stamp <= last {
		return nil, fmt.Errorf("is stamped %d by %s, not later than %d this machine accepted: an old status put back", v.Stamp, v.By, last)
	}
	b.last[who] = v.Stamp
	b.accepted[member] = acceptedStatus{rev: rev, data: v.Status}
	return v.Status, nil
}

// fallback is the last status of member this reader accepted.
func (b *kvBoard) fallback(member string) ([]byte, time.Time, bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	a, ok := b.accepted[member]
	if !ok {
		return nil, time.Time{}, false, nil
	}
	return a.data, b.seen[member].at, true, nil
}
