package remote

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
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
// travel in.
func (s *Signer) SealProgress(p Progress, jobSig []byte) []byte {
	payload := mustJSON(signedProgress{Progress: p, JobSignature: jobSig})
	sig := ed25519.Sign(s.key, append([]byte(progressContext), payload...))
	return mustJSON(Envelope{Key: s.name, Payload: payload, Signature: sig})
}

// openProgress checks a progress event of job id, submitted in an
// envelope signed jobSig: signed by a worker in keys, for this job.
// A worker's event replayed within the same job carries totals no higher
// than the latest, which the lead keeps (crew counts only growth).
func openProgress(keys WorkerKeys, data []byte, id string, jobSig []byte) (Progress, error) {
	var env Envelope
	if err := decodeStrict(data, &env); err != nil {
		return Progress{}, fmt.Errorf("a progress event of job %s is not signed (forged, or from a worker older than this lead): %v", id, err)
	}
	pub, ok := keys.Key(env.Key)
	if env.Key == "" || !ok {
		return Progress{}, fmt.Errorf("a progress event of job %s is signed by worker key %q, which this lead does not trust", id, env.Key)
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
	return p.Progress, nil
}
