package remote

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"syscall"
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

// untrustedWhy says why a worker key is not trusted: the trust file's
// problem if it has one, else that its line is missing.
func untrustedWhy(keys WorkerKeys) string {
	if p, ok := keys.(interface{ Problem() error }); ok {
		if err := p.Problem(); err != nil {
			return err.Error()
		}
	}
	return "add the worker's key line to the lead's trusted_workers file"
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
		return nil, fmt.Errorf("a result of job %s is signed by worker key %q, which this lead does not trust (%s)", id, env.Key, untrustedWhy(keys))
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
// and read again whenever the file changed (its identity, size,
// modification or status-change time, checked at every look-up), so a
// worker added to the file while the lead runs is trusted without a
// restart, and one removed from it (found compromised) is trusted no
// more from the next message on. The status-change time is compared
// too, since a writer can put a modification time back (touch -r, rsync
// -t) and no one can put back the ctime. A file that cannot be read
// when it changed (removed, made unreadable, grown past the limit, half
// written) trusts no worker until it reads again: removing the file is
// how a user stops trusting every worker at once, and keys read before
// are not kept on the strength of a file that no longer says them.
// Problem says why. Safe for concurrent use.
type TrustFile struct {
	path string
	mu   sync.Mutex
	ring *Keyring
	fi   os.FileInfo // the file as it was when ring was read (nil if it could not be)
	err  error       // why the file last read trusts no one, or nil
}

// NewTrustFile reads path (ReadKeyring's format). A file that is missing
// or trusts no key is an error: a lead that trusts no worker takes no
// result.
func NewTrustFile(path string) (*TrustFile, error) {
	t := &TrustFile{path: path}
	t.reload()
	if t.err != nil {
		return nil, t.err
	}
	if t.ring.Len() == 0 {
		return nil, fmt.Errorf("%s trusts no worker: add the key line each worker prints when it starts (\"results signed as NAME KEY\")", path)
	}
	return t, nil
}

// reload reads the file again if it changed since it was last read (or
// last failed to read). On an error, no key is trusted and t.err says why.
func (t *TrustFile) reload() {
	fi, err := os.Stat(t.path)
	if err != nil {
		t.ring, t.fi = NewKeyring(), nil
		t.err = fmt.Errorf("trusted workers: %w (a lead takes results only from workers whose key lines are in this file; no worker is trusted until it can be read)", err)
		return
	}
	if t.fi != nil && sameVersion(fi, t.fi) {
		return
	}
	ring, err := ReadKeyring(t.path)
	if err != nil {
		ring = NewKeyring()
		err = fmt.Errorf("%w (no worker is trusted until the file reads again)", err)
	}
	t.ring, t.fi, t.err = ring, fi, err
}

// sameVersion reports whether a and b are the same file unchanged: same
// identity, size, modification and status-change times.
func sameVersion(a, b os.FileInfo) bool {
	if !os.SameFile(a, b) || a.Size() != b.Size() || !a.ModTime().Equal(b.ModTime()) {
		return false
	}
	sa, ok1 := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && ctime(sa) == ctime(sb)
}

// Problem says why the file, as last looked at, trusts no worker (it is
// gone, unreadable, too large or malformed), or nil.
func (t *TrustFile) Problem() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.reload()
	return t.err
}

// Key returns the key of worker name, reading the file again first if it
// changed since it was read.
func (t *TrustFile) Key(name string) (ed25519.PublicKey, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.reload() // on an error no key is trusted (see TrustFile)
	return t.ring.Key(name)
}
