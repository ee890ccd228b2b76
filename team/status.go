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
// (an old signed status put back is refused where the newer was read).
// That floor is one reader's, in memory: a board started later (a machine
// spawned after the member stopped, a resumed lead) had none, and took a
// stopped member's old "working" put back by a bucket writer. So each
// status also names the generation of the member's key in force when it
// was signed (KeyGrant), and a reader takes it only at the generation in
// force now; when the lead's machine puts a status saying a member is
// gone ("stopped" or "dead", package teammate's states) — or reads one
// the member put itself, which it puts again — the lead first signs the
// member's key again as the next generation (the same key: its messages
// still verify). Every status signed before then is refused everywhere
// that grant is known, and grants are already kept against rollback: in
// the bucket, in every machine's keys/{member}.grant, and carried by each
// spawn. A machine also keeps the last terminal status it accepted
// (keys/status.{member}.json), so a resumed lead reads the member gone,
// not unknown, while the bucket holds the refused one. A status that
// fails a check is reported (the store's Mailbox.OnProblem: the lead, on
// its machine) and passed over: the last status this reader accepted for
// the member stands, or none. Wire: statuses written before this
// (no generation) are refused for a member that has a grant, and an
// older reader refuses a status naming a generation (its signature
// covers a field it does not know): upgrade a team's machines together.
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
	by   string
}

const statusContext = "cohort team status v1\n"

// signedStatus is a status as the status bucket holds it.
type signedStatus struct {
	Team   string `json:"team"`
	Member string `json:"member"`
	By     string `json:"by"`
	Stamp  int64  `json:"stamp"` // the signer's clock, ns; one more at least at each put
	// Generation is the member's key generation in force when it was
	// signed (its KeyGrant's; 0 while it has none).
	Generation uint64          `json:"generation,omitempty"`
	Status     json.RawMessage `json:"status"`
	// Signature is By's, with its key in force (the lead's, or the grant).
	Signature string `json:"signature,omitempty"`
}

func (v signedStatus) unsigned() signedStatus { v.Signature = ""; return v }

func (b *kvBoard) Put(ctx context.Context, member string, data []byte) error {
	by, key := member, ed25519.PrivateKey(nil)
	lead, isLead := b.keys.leadPrivate()
	if isLead {
		by, key = LeadName, lead
	} else {
		var err error
		if key, err = b.keys.PrivateKey(member); err != nil {
			return fmt.Errorf("team %q: sign %s's status: %w", b.keys.team, member, err)
		}
	}
	gen, err := b.generation(ctx, member, lead, isLead && terminal(data))
	if err != nil {
		return fmt.Errorf("team %q: sign %s's status: %w", b.keys.team, member, err)
	}
	b.mu.Lock()
	b.stamp = max(b.stamp+1, b.now().UnixNano())
	v := signedStatus{Team: b.keys.team, Member: member, By: by, Stamp: b.stamp, Generation: gen, Status: data}
	b.mu.Unlock()
	v.Signature = signValue(statusContext, v.unsigned(), key)
	env, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if _, err := b.kv.Put(ctx, member, env); err != nil {
		return err
	}
	if terminal(data) {
		b.keepTerminal(member, env)
	}
	return nil
}

// terminal reports whether a status says its member is gone for good:
// package teammate's state "stopped" or "dead".
func terminal(data []byte) bool {
	var st struct {
		State string `json:"state"`
	}
	return json.Unmarshal(data, &st) == nil && (st.State == "stopped" || st.State == "dead")
}

// generation is the generation of member's key a status is signed at:
// the grant in force. With fence (the lead's machine puts a status that
// says the member is gone), the lead first signs the member's key again
// as the next generation — the same key, so its messages still verify —
// and every status signed before (the member's own "working", the
// lead's) names an older generation wherever the new grant is known: on
// every machine that reads the bucket's grant, on one spawned later (the
// spawn carries the grants) and on the lead's after a resume
// (keys/{member}.grant). A member that never had a key is given one
// first (PrivateKey, on the lead's machine).
func (b *kvBoard) generation(ctx context.Context, member string, lead ed25519.PrivateKey, fence bool) (uint64, error) {
	cur, found, err := b.keys.current(ctx, member)
	if errors.As(err, new(netErr)) {
		return 0, err
	}
	if fence && err == nil && !found {
		if _, err := b.keys.PrivateKey(member); err == nil {
			cur, found, err = b.keys.current(ctx, member)
		}
	}
	if err != nil || !found {
		return 0, nil // readers judge: a member without a grant signs at 0
	}
	if !fence {
		return cur.Generation, nil
	}
	g := cur
	g.Generation = b.keys.floor(member, cur) + 1
	if err := b.keys.grant(ctx, lead, g); err != nil {
		return 0, err
	}
	return g.Generation, nil
}

func (b *kvBoard) Get(ctx context.Context, member string) ([]byte, time.Time, bool, error) {
	e, err := b.kv.Get(ctx, member)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return b.fallback(ctx, member)
	}
	if err != nil {
		return nil, time.Time{}, false, err
	}
	data, by, err := b.check(ctx, member, e.Revision(), e.Value())
	if err != nil {
		if errors.As(err, new(netErr)) {
			return nil, time.Time{}, false, err
		}
		b.keys.s.reportAt(b.keys.team, b.kv.Bucket(), member, e.Revision(), fmt.Sprintf("team %q: the status of %s (bucket %s key %s revision %d) %v: ignored; the last status this machine accepted stands (nats kv history %s %s shows who wrote it)",
			b.keys.team, member, b.kv.Bucket(), member, e.Revision(), err, b.kv.Bucket(), member))
		return b.fallback(ctx, member)
	}
	if _, isLead := b.keys.leadPrivate(); isLead && by == member && terminal(data) {
		// A member on another machine said it is gone: the lead fences
		// its earlier statuses (generation) by putting this one again.
		_ = b.Put(ctx, member, data)
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
func (b *kvBoard) check(ctx context.Context, member string, rev uint64, env []byte) ([]byte, string, error) {
	b.mu.Lock()
	if a, ok := b.accepted[member]; ok && a.rev == rev {
		b.mu.Unlock()
		return a.data, a.by, nil
	}
	b.mu.Unlock()
	var v signedStatus
	if err := json.Unmarshal(env, &v); err != nil || v.Signature == "" {
		return nil, "", errors.New("is not signed")
	}
	if v.Team != b.keys.team || v.Member != member || v.By != member && v.By != LeadName {
		return nil, "", fmt.Errorf("is signed by %s for member %s of team %q: only the member itself or the lead may publish it", v.By, v.Member, v.Team)
	}
	pub, err := b.keys.publicKey(v.By)
	if err != nil {
		return nil, "", err
	}
	if !verifyValue(statusContext, v.unsigned(), v.Signature, pub) {
		return nil, "", fmt.Errorf("does not verify with the key of %s in force", v.By)
	}
	cur, found, err := b.keys.current(ctx, member)
	if err != nil {
		return nil, "", fmt.Errorf("cannot be checked against %s's key generation: %w", member, err)
	}
	if !found {
		cur.Generation = 0
	}
	switch {
	case v.Generation < cur.Generation:
		return nil, "", fmt.Errorf("is signed at generation %d of %s's key, and generation %d is in force (the lead signs the next when the member stops, dies or is respawned): an old status put back", v.Generation, member, cur.Generation)
	case v.Generation > cur.Generation:
		return nil, "", fmt.Errorf("names generation %d of %s's key, newer than generation %d in force here", v.Generation, member, cur.Generation)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	who := member + "\x00" + v.By
	if last, ok := b.last[who]; ok && v.Stamp <= last {
		return nil, "", fmt.Errorf("is stamped %d by %s, not later than %d this machine accepted: an old status put back", v.Stamp, v.By, last)
	}
	b.last[who] = v.Stamp
	b.accepted[member] = acceptedStatus{rev: rev, data: v.Status, by: v.By}
	if rev != 0 && terminal(v.Status) {
		b.keepTerminal(member, env)
	}
	return v.Status, v.By, nil
}

// fallback is the last status of member this reader accepted, or, on
// a board that accepted none (a resumed lead's, a restarted worker's),
// the last terminal status this machine accepted (keepTerminal) if it
// still holds: its key's generation is still in force.
func (b *kvBoard) fallback(ctx context.Context, member string) ([]byte, time.Time, bool, error) {
	b.mu.Lock()
	a, ok := b.accepted[member]
	at := b.seen[member].at
	b.mu.Unlock()
	if ok {
		return a.data, at, true, nil
	}
	env, err := os.ReadFile(b.terminalPath(member))
	if err != nil {
		return nil, time.Time{}, false, nil
	}
	data, _, err := b.check(ctx, member, 0, env)
	if err != nil {
		return nil, time.Time{}, false, nil
	}
	return data, b.now(), true, nil
}

func (b *kvBoard) terminalPath(member string) string {
	return filepath.Join(b.keys.dir, "status."+member+".json")
}

// keepTerminal records env, member's status saying it is gone, in this
// machine's keys directory, so that a board started later here (a
// resumed lead) reads the member gone when the bucket holds an older
// status put back. Only terminal statuses are kept: they are rare,
// while heartbeats come every few seconds.
func (b *kvBoard) keepTerminal(member string, env []byte) {
	if os.MkdirAll(b.keys.dir, 0o700) == nil {
		_ = atomicfile.Write(b.terminalPath(member), env, 0o600)
	}
}
