package team

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/cohort-dev/cohort/tasklist"
)

// Signed tasks. On NATS the task list is an entry of the state bucket
// that any client of the server may write, and a task is an instruction
// to the member who owns it. Decisions:
//
//   - Each task in the entry is signed (signedTask) by the machine that
//     wrote it last: the lead's machine with the lead's key (for the lead
//     and every teammate it runs, which share its keys directory), a
//     worker with the key the lead granted the member it runs. The
//     signature covers the team, its creation time, the task's id, a
//     sequence number (one more at each change of the task) and the task.
//   - A task is read only if its signer is a member of the team, its
//     signature verifies with the signer's key in force (the lead's, or
//     the member's current grant: a key of an earlier generation no longer
//     signs), and it is not older than the version of that task this
//     machine accepted last (keys/tasks.json). A member other than the
//     lead does not take a claimed task from its owner: a version signed
//     by a third member that changes the owner of a task this machine
//     last saw claimed is refused.
//   - A task that fails is reported (the store's Mailbox.OnProblem: the
//     lead, on its machine) and passed over: the version this machine
//     accepted stands, and the next write puts it back; with none, the
//     task is not read at all (and its id is not reused).
//   - The compare-and-set of the whole list stays as it was: two machines
//     cannot claim one task.
//
// What remains: the list's high-water mark is unsigned (a writer can make
// new ids jump); a task removed from the entry by a bucket writer is gone
// for machines that never accepted it (denial, as removing a member from
// the team file is); a machine accepts a task version it never saw the
// successor of (a signed value put back is refused only where the newer
// one was read); a member's key may sign any task that is unclaimed or its
// own, and a task version that a respawned member signed with its earlier
// key is refused where it was not accepted before (the lead re-signs it
// at its next change).

const taskContext = "cohort team task v1\n"

// signedTask is one task as the team's bucket holds it.
type signedTask struct {
	Team      string          `json:"team"`
	Created   int64           `json:"created"` // the team's creation, ms
	ID        string          `json:"id"`
	Seq       uint64          `json:"seq"`
	By        string          `json:"by"`
	Task      json.RawMessage `json:"task"`
	Signature string          `json:"signature,omitempty"`
}

func (v signedTask) unsigned() signedTask { v.Signature = ""; return v }

func (v signedTask) older(u signedTask) bool {
	return v.Created < u.Created || v.Created == u.Created && v.Seq < u.Seq
}

// taskSigner signs and checks the tasks of one team's list on NATS.
type taskSigner struct {
	k       memberKeys
	created int64

	mu       sync.Mutex
	rev      uint64                // the list revision keys were looked up for
	keys     map[string]keyOrErr   // signers' keys in force at rev
	acc      map[string]signedTask // keys/tasks.json, as last read or written
	accStamp fileStamp             // its modification time and size then
}

type keyOrErr struct {
	pub ed25519.PublicKey
	err error
}

// publicKey is by's key in force, looked up once per list revision.
func (ts *taskSigner) publicKey(by string, rev uint64) (ed25519.PublicKey, error) {
	ts.mu.Lock()
	if ts.rev != rev || ts.keys == nil {
		ts.rev, ts.keys = rev, map[string]keyOrErr{}
	}
	k, ok := ts.keys[by]
	ts.mu.Unlock()
	if ok {
		return k.pub, k.err
	}
	pub, err := ts.k.publicKey(by)
	if !errors.As(err, new(netErr)) {
		ts.mu.Lock()
		if ts.rev == rev {
			ts.keys[by] = keyOrErr{pub, err}
		}
		ts.mu.Unlock()
	}
	return pub, err
}

// tasksMu serializes the writes of keys/tasks.json in this process.
var tasksMu sync.Mutex

func (ts *taskSigner) acceptedPath() string { return filepath.Join(ts.k.dir, "tasks.json") }

// accepted are the task versions this machine accepted, by id, of this
// team (an earlier team's of the same name count for nothing), read
// again from keys/tasks.json whenever it changed (another list or process
// of this machine wrote it). The map is never changed once returned.
func (ts *taskSigner) accepted() map[string]signedTask {
	fi, err := os.Stat(ts.acceptedPath())
	var stamp fileStamp
	if err == nil {
		stamp = fileStamp{fi.ModTime().UnixNano(), fi.Size()}
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if ts.acc == nil || stamp != ts.accStamp {
		ts.acc, ts.accStamp = ts.load(), stamp
	}
	return ts.acc
}

type fileStamp struct{ mtime, size int64 }

func (ts *taskSigner) load() map[string]signedTask {
	out := map[string]signedTask{}
	data, err := os.ReadFile(ts.acceptedPath())
	if err != nil || json.Unmarshal(data, &out) != nil {
		return map[string]signedTask{}
	}
	for id, v := range out {
		if v.Created != ts.created {
			delete(out, id)
		}
	}
	return out
}

func (ts *taskSigner) accept(v signedTask) error {
	if cur, ok := ts.accepted()[v.ID]; ok && !cur.older(v) {
		return nil
	}
	tasksMu.Lock()
	defer tasksMu.Unlock()
	acc := ts.load() // another process of this machine may have written it
	if cur, ok := acc[v.ID]; ok && !cur.older(v) {
		return nil
	}
	acc[v.ID] = v
	ts.mu.Lock()
	ts.acc, ts.accStamp = acc, fileStamp{} // read again, stamped, next time
	ts.mu.Unlock()
	data, _ := json.Marshal(acc)
	if err := os.MkdirAll(ts.k.dir, 0o700); err != nil {
		return err
	}
	// Not synced: a version lost in a crash is accepted again when read.
	f, err := os.CreateTemp(ts.k.dir, ".tasks-*.json")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), ts.acceptedPath())
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// signer is who signs what this machine writes: the lead on the lead's
// machine, else the member whose key the lead granted here.
func (ts *taskSigner) signer(ctx context.Context) (string, ed25519.PrivateKey, error) {
	if lead, ok := ts.k.leadPrivate(); ok {
		return LeadName, lead, nil
	}
	entries, _ := os.ReadDir(ts.k.dir)
	names := []string{}
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".key"); ok && name != LeadName && ValidateName(name) == nil {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		if _, _, err := ts.k.member(name); err != nil {
			continue
		}
		if key, err := ts.k.PrivateKey(name); err == nil {
			return name, key, nil
		}
	}
	return "", nil, fmt.Errorf("team %q: this machine holds no member key the lead granted (in %s), so it cannot sign a change of the task list", ts.k.team, ts.k.dir)
}

func (ts *taskSigner) Seal(ctx context.Context, id string, task []byte, prev json.RawMessage) (json.RawMessage, error) {
	by, key, err := ts.signer(ctx)
	if err != nil {
		return nil, err
	}
	v := signedTask{Team: ts.k.team, Created: ts.created, ID: id, Seq: 1, By: by, Task: task}
	var p signedTask
	if prev != nil && json.Unmarshal(prev, &p) == nil && p.Created == ts.created {
		v.Seq = p.Seq + 1
	}
	if acc, ok := ts.accepted()[id]; ok {
		v.Seq = max(v.Seq, acc.Seq+1)
	}
	// Accepted here once stored (Stored): the compare-and-set may lose.
	v.Signature = signValue(taskContext, v.unsigned(), key)
	return json.Marshal(v)
}

// Stored accepts what this machine wrote; a failure to record it only
// leaves the previous version as the floor here.
func (ts *taskSigner) Stored(_ string, entry json.RawMessage) {
	var v signedTask
	if json.Unmarshal(entry, &v) == nil {
		_ = ts.accept(v)
	}
}

func (ts *taskSigner) Open(ctx context.Context, id string, entry json.RawMessage, rev uint64) ([]byte, json.RawMessage, bool, error) {
	acc, hasAcc := ts.accepted()[id] // never changed once read: accept makes a new map
	v, why := ts.check(id, entry, rev, acc, hasAcc)
	if why == nil {
		if err := ts.accept(v); err != nil {
			return nil, nil, false, err
		}
		stands, err := json.Marshal(v)
		return v.Task, stands, true, err
	}
	if errors.As(why, new(netErr)) {
		return nil, nil, false, why
	}
	bucket := StateBucket(ts.k.team)
	reason := fmt.Sprintf("team %q: task #%s in the task list (bucket %s key %s revision %d) %v: ", ts.k.team, id, bucket, tasklist.KVKey, rev, why)
	if !hasAcc {
		ts.k.s.reportAt(ts.k.team, bucket, tasklist.KVKey, rev, reason+"ignored, no machine's word for it (nats kv history "+bucket+" "+tasklist.KVKey+" shows who wrote it)")
		return nil, nil, false, nil
	}
	ts.k.s.reportAt(ts.k.team, bucket, tasklist.KVKey, rev, fmt.Sprintf("%sthe version number %d this machine accepted stands", reason, acc.Seq))
	stands, _ := json.Marshal(acc)
	return acc.Task, stands, true, nil
}

// check returns the task entry holds, if it holds against what this
// machine accepted (acc).
func (ts *taskSigner) check(id string, entry json.RawMessage, rev uint64, acc signedTask, hasAcc bool) (signedTask, error) {
	var v signedTask
	if err := json.Unmarshal(entry, &v); err != nil || v.Signature == "" {
		return v, errors.New("is not signed")
	}
	if hasAcc && v.Signature == acc.Signature {
		return acc, nil // the version accepted here: checked then
	}
	if v.Team != ts.k.team || v.ID != id || v.Created != ts.created {
		return v, fmt.Errorf("is signed as task #%s of team %q created at %d, not this one", v.ID, v.Team, v.Created)
	}
	pub, err := ts.publicKey(v.By, rev)
	if err != nil {
		if errors.As(err, new(netErr)) {
			return v, err
		}
		return v, fmt.Errorf("is signed by %s, whose key this team does not know (%v)", v.By, err)
	}
	if !verifyValue(taskContext, v.unsigned(), v.Signature, pub) {
		return v, fmt.Errorf("does not verify with the key of %s in force", v.By)
	}
	if !hasAcc {
		return v, nil
	}
	if v.older(acc) {
		return v, fmt.Errorf("is version %d, older than version %d this machine accepted: an old task put back", v.Seq, acc.Seq)
	}
	if v.By != LeadName {
		was, now := ownerOf(acc.Task), ownerOf(v.Task)
		if was != "" && was != v.By && now != was {
			return v, fmt.Errorf("gives %s's claimed task to %q, signed by %s: only its owner or the lead may", was, now, v.By)
		}
	}
	return v, nil
}

func ownerOf(task json.RawMessage) string {
	var t struct {
		Owner string `json:"owner"`
	}
	_ = json.Unmarshal(task, &t)
	return t.Owner
}
