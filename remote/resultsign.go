package remote

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
)

// resultContext is signed with every result, so a signature a worker
// made for anything else cannot pass for one.
const resultContext = "cohort remote result v1\n"

// WorkerKeys are the workers a lead takes results from: a *Keyring, or a
// *TrustFile that reads its file again whenever it changed.
type WorkerKeys interface {
	Key(name string) (ed25519.PublicKey, bool)
}

// SealResult signs r as this signer's, a worker's: r.Worker becomes the
// signer's name. The envelope is the one jobs travel in, signed over
// another context string.
func (s *Signer) SealResult(r *Result) []byte {
	r.Worker = s.name
	payload := mustJSON(r)
	sig := ed25519.Sign(s.key, append([]byte(resultContext), payload...))
	return mustJSON(Envelope{Key: s.name, Payload: payload, Signature: sig})
}

// resultMsgID is a stored result's message id: the job's and a digest of
// the signed bytes, so a worker's retried publish is stored once, and no
// one who cannot make the worker's signature can take the id first (a
// message id "result-<id>" published before any worker ran the job
// would otherwise have the real result dropped as a duplicate).
func resultMsgID(id string, data []byte) string {
	sum := sha256.Sum256(data)
	return "result-" + id + "-" + hex.EncodeToString(sum[:8])
}

// OpenResult checks a stored or published result of job id, which this
// lead submitted in an envelope signed jobSig: it must be signed by a
// worker in keys, name that worker, name the job, and quote jobSig (so
// the result of an older job with the same id, or of another lead's,
// does not pass). Anything else is an error that says why.
func OpenResult(keys WorkerKeys, data []byte, id string, jobSig []byte) (*Result, error) {
	var env Envelope
	if err := decodeStrict(data, &env); err != nil {
		return nil, fmt.Errorf("a result of job %s is not a signed result (forged, or from a worker older than this lead): %v", id, err)
	}
	if env.Key == "" || len(env.Signature) == 0 {
		return nil, fmt.Errorf("a result of job %s is not signed; a lead takes only results signed by a worker it trusts", id)
	}
	pub, ok := keys.Key(env.Key)
	if !ok {
		return nil, fmt.Errorf("a result of job %s is signed by worker key %q, which this lead does not trust (add the worker's key line to the lead's trusted_workers file)", id, env.Key)
	}
	if !ed25519.Verify(pub, append([]byte(resultContext), env.Payload...), env.Signature) {
		return nil, fmt.Errorf("a result of job %s does not verify with worker key %q: it was altered or signed with another key", id, env.Key)
	}
	r, err := DecodeResult(env.Payload)
	switch {
	case err != nil:
		return nil, err
	case r.Worker != env.Key:
		return nil, fmt.Errorf("a result of job %s names worker %q but is signed by %q", id, r.Worker, env.Key)
	case r.JobID != id:
		return nil, fmt.Errorf("a result stored for job %s is worker %s's result of job %q", id, env.Key, r.JobID)
	case len(jobSig) == 0:
		return nil, fmt.Errorf("a result of job %s: this lead did not submit job %s, so it cannot tell its result", id, id)
	case !bytes.Equal(r.Signature, jobSig):
		return nil, fmt.Errorf("a result of job %s signed by worker %s answers another job with that id (an older one, or another lead's), not the one this lead submitted", id, env.Key)
	}
	return r, nil
}

// TrustFile is a lead's trusted_workers file: a Keyring read from path,
// and read again whenever the file changed (its identity, size or time,
// checked at every look-up), so a worker added to the file while the
// lead runs is trusted without a restart, and one removed from it (found
// compromised) is trusted no more from the next message on. A file that
// cannot be read when it changed (half written, or removed) leaves the
// keys last read in force; a later change is read again. Safe for
// concurrent use.
type TrustFile struct {
	path string
	mu   sync.Mutex
	ring *Keyring
	fi   os.FileInfo // the file as it was when ring was read
}

// NewTrustFile reads path (ReadKeyring's format). A file that is missing
// or trusts no key is an error: a lead that trusts no worker takes no
// result.
func NewTrustFile(path string) (*TrustFile, error) {
	t := &TrustFile{path: path}
	if err := t.reload(); err != nil {
		return nil, err
	}
	if t.ring.Len() == 0 {
		return nil, fmt.Errorf("%s trusts no worker: add the key line each worker prints when it starts (\"results signed as NAME KEY\")", path)
	}
	return t, nil
}

func (t *TrustFile) reload() error {
	fi, err := os.Stat(t.path)
	if err != nil {
		return fmt.Errorf("trusted workers: %w (a lead takes results only from workers whose key lines are in this file)", err)
	}
	if t.ring != nil && os.SameFile(fi, t.fi) && fi.Size() == t.fi.Size() && fi.ModTime().Equal(t.fi.ModTime()) {
		return nil
	}
	ring, err := ReadKeyring(t.path)
	if err != nil {
		return err
	}
	t.ring, t.fi = ring, fi
	return nil
}

// Key returns the key of worker name, reading the file again first if it
// changed since it was read.
func (t *TrustFile) Key(name string) (ed25519.PublicKey, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	_ = t.reload() // on an error the keys last read stay (see TrustFile)
	return t.ring.Key(name)
}
