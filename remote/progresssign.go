package remote

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"sync"
)

// progressContext is signed with every progress event, so a signature a
// worker made for a result (or anything else) cannot pass for one.
const progressContext = "cohort remote progress v1\n"

// signedProgress is a progress event's signed payload: the event and the
// lead's signature on the job's envelope, so an event of an older job
// with the same id does not pass for this one's.
type signedProgress struct {
	Progress
	JobSignature []byte `json:"job_signature"`
}

// SealProgress signs p, an event of the job whose envelope the lead
// signed jobSig, as this signer's (a worker's), in the envelope results
// travel in: p.Worker becomes the signer's name.
func (s *Signer) SealProgress(p Progress, jobSig []byte) []byte {
	p.Worker = s.name
	payload := mustJSON(signedProgress{Progress: p, JobSignature: jobSig})
	sig := ed25519.Sign(s.key, append([]byte(progressContext), payload...))
	return mustJSON(Envelope{Key: s.name, Payload: payload, Signature: sig})
}

// openProgress checks a progress event of job id, submitted in an
// envelope signed jobSig: signed by a worker in keys, for this job.
// The event must name the worker that signed it: a trusted worker cannot
// speak under another's name. A worker's event replayed within the same
// job carries totals no higher than the latest, which the lead keeps
// (crew counts only growth). Which worker runs the job is Wait's to
// judge (progressFrom).
func openProgress(keys WorkerKeys, data []byte, id string, jobSig []byte) (Progress, error) {
	var env Envelope
	if err := decodeStrict(data, &env); err != nil {
		return Progress{}, fmt.Errorf("a progress event of job %s is not signed (forged, or from a worker older than this lead): %v", id, err)
	}
	pub, ok := keys.Key(env.Key)
	if env.Key == "" || !ok {
		return Progress{}, fmt.Errorf("a progress event of job %s is signed by worker key %q, which this lead does not trust (%s)", id, env.Key, untrustedWhy(keys))
	}
	if !ed25519.Verify(pub, append([]byte(progressContext), env.Payload...), env.Signature) {
		return Progress{}, fmt.Errorf("a progress event of job %s does not verify with worker key %q", id, env.Key)
	}
	var p signedProgress
	if err := decodeStrict(env.Payload, &p); err != nil {
		return Progress{}, fmt.Errorf("a progress event of job %s is signed but does not parse: %v", id, err)
	}
	if p.JobID != id || len(jobSig) == 0 || !bytes.Equal(p.JobSignature, jobSig) {
		return Progress{}, fmt.Errorf("a progress event signed for job %s is not for the job %s this lead submitted", p.JobID, id)
	}
	if p.Worker != env.Key {
		return Progress{}, fmt.Errorf("a progress event of job %s names worker %q but is signed by %q", id, p.Worker, env.Key)
	}
	return p.Progress, nil
}

// progressFrom keeps to the worker running one job, for one Wait: the
// worker whose "running" event came last. A worker sends one as it takes
// the job and again at every heartbeat while it runs it (so a Wait that
// began later learns it within a third of the ack wait), and the next
// worker sends its own when the job is handed to it. Another trusted
// worker's events for the job are refused, and so is every event before
// a "running" one is heard: the lead does not yet know who runs the job.
// (A trusted worker that claims a job with a "running" event of its own
// is believed, as its signed result would be: trusting a worker is
// trusting what it says of the jobs it can see.)
// errNoRunnerYet refuses an event that came before any "running" one: not
// reported, since a lead that began to wait after the job started meets
// it in the normal course (the worker's next heartbeat says who runs it).
var errNoRunnerYet = errors.New("no worker has said it runs the job yet")

type progressFrom struct {
	mu     sync.Mutex
	worker string
}

func (f *progressFrom) take(id string, p Progress) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p.Phase == "running" {
		f.worker = p.Worker
	}
	switch f.worker {
	case p.Worker:
		return nil
	case "":
		return errNoRunnerYet
	}
	return fmt.Errorf("a progress event of job %s is signed by worker %q, but worker %q runs it", id, p.Worker, f.worker)
}
