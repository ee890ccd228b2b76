package team

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/cohort-dev/cohort/internal/atomicfile"

	"github.com/nats-io/nats.go/jetstream"
)

// Respawns are learned in order. A machine that took its spawn before a
// member's respawn must not take that member's earlier key back when a
// bucket writer puts the earlier grant back before this machine read the
// new one (keyattack2 K3). So every machine watches the grant entries of
// its team's state bucket from the moment it connects: the watch delivers
// each put in the stream's order, and raises this machine's highest
// accepted generation of each member (keys/{member}.grant) as each
// lead-signed grant passes. Before a grant read from the bucket at
// revision R is trusted (memberKeys.current), the watch must have passed
// R: every grant the lead wrote before it, the new generation among them,
// has been seen, and the earlier one put back is refused as older. The
// state bucket keeps a history of stateHistory revisions per key, so
// that one put back does not erase the new grant from the stream before
// a slow watcher reads it.
//
// What remains: a client that deletes the new grant's message from the
// stream (not just overwrites the key) before a machine's watch delivered
// it — within moments of the respawn, the machine's connection being
// live — and holds the old private key is still heard there with it. A
// machine whose watch cannot catch up (its connection is down) reads no
// grant: messages wait (ErrKeyUnavailable), never trusted blind.

// stateHistory is how many revisions of each key the state bucket keeps.
const stateHistory = 16

// grantWatch follows the grant entries of one team's state bucket.
type grantWatch struct {
	k    memberKeys
	stop context.CancelFunc

	mu      sync.Mutex
	rev     uint64        // the highest revision delivered
	advance chan struct{} // closed when rev rises
}

// watchGrants starts following the grant entries of state.
func watchGrants(state jetstream.KeyValue, k memberKeys) (*grantWatch, error) {
	ctx, cancel := context.WithCancel(context.Background())
	kw, err := state.Watch(ctx, GrantKey("*"))
	if err != nil {
		cancel()
		return nil, fmt.Errorf("watch the member keys of bucket %s: %w", StateBucket(k.team), err)
	}
	w := &grantWatch{k: k, stop: cancel, advance: make(chan struct{})}
	go func() {
		defer func() { _ = kw.Stop() }()
		for e := range kw.Updates() {
			if e == nil {
				continue // the present entries were delivered
			}
			if e.Operation() == jetstream.KeyValuePut {
				w.take(e)
			}
			w.mu.Lock()
			if e.Revision() > w.rev {
				w.rev = e.Revision()
				close(w.advance)
				w.advance = make(chan struct{})
			}
			w.mu.Unlock()
		}
	}()
	return w, nil
}

// take raises the member's accepted generation to e's, if e is a grant
// the lead signed (current reports the ones that are not, when read).
func (w *grantWatch) take(e jetstream.KeyValueEntry) {
	member, _ := strings.CutPrefix(e.Key(), GrantKey(""))
	lead, err := w.k.leadPublic()
	if err != nil || ValidateName(member) != nil {
		return
	}
	var g KeyGrant
	if json.Unmarshal(e.Value(), &g) != nil || w.k.check(g, member, lead) != nil {
		return
	}
	_ = w.k.raise(g, lead)
}

// await returns once the watch delivered revision rev of the bucket, or
// later ones.
func (w *grantWatch) await(ctx context.Context, rev uint64) error {
	for {
		w.mu.Lock()
		done, next := w.rev >= rev, w.advance
		w.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-next:
		case <-ctx.Done():
			return netErr{fmt.Errorf("team %q: the watch of member keys in bucket %s has not reached revision %d: %w", w.k.team, StateBucket(w.k.team), rev, ctx.Err())}
		}
	}
}

// grantMu serializes the read-compare-write of grant files in this
// process.
var grantMu sync.Mutex

// raise records g, checked with lead, as the highest grant of its member
// accepted here, unless a higher one is.
func (k memberKeys) raise(g KeyGrant, lead ed25519.PublicKey) error {
	grantMu.Lock()
	defer grantMu.Unlock()
	if loc, ok, err := k.local(g.Member, lead); err != nil || ok && loc.Generation >= g.Generation {
		return err
	}
	if err := os.MkdirAll(k.dir, 0o700); err != nil {
		return err
	}
	data, _ := json.Marshal(g)
	return atomicfile.Write(k.grantPath(g.Member), data, 0o600)
}
