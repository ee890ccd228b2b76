package remote

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
)

// cancelContext is signed with every cancellation, so a signature the
// lead made for a job (or anything else) cannot pass for one.
const cancelContext = "cohort remote cancel v1\n"

// cancelOrder is a cancellation's signed payload: the job's id and the
// lead's signature on the job's envelope, so a cancellation of an older
// job with the same id does not stop this one.
type cancelOrder struct {
	JobID        string `json:"job_id"`
	JobSignature []byte `json:"job_signature"`
}

// SealCancel signs the cancellation of job id, submitted in an envelope
// signed jobSig, in the envelope jobs travel in.
func (s *Signer) SealCancel(id string, jobSig []byte) []byte {
	payload := mustJSON(cancelOrder{JobID: id, JobSignature: jobSig})
	sig := ed25519.Sign(s.key, append([]byte(cancelContext), payload...))
	return mustJSON(Envelope{Key: s.name, Payload: payload, Signature: sig})
}

// OpenCancel checks a cancellation of job, which came in an envelope
// signed jobSig: it must be signed by the job's lead and name the job's
// id and signature. Anything else is an error that says why; the job then
// keeps running.
func (k *Keyring) OpenCancel(data []byte, job *Job, jobSig []byte) error {
	var env Envelope
	if err := decodeStrict(data, &env); err != nil {
		return fmt.Errorf("a cancellation of job %s is not a signed cancellation: %v", job.ID, err)
	}
	if env.Key != job.Lead || len(env.Signature) == 0 {
		return fmt.Errorf("a cancellation of job %s is signed by %q, not by the job's lead %q", job.ID, env.Key, job.Lead)
	}
	pub, ok := k.Key(env.Key)
	if !ok || !ed25519.Verify(pub, append([]byte(cancelContext), env.Payload...), env.Signature) {
		return fmt.Errorf("a cancellation of job %s does not verify with the lead's key %q", job.ID, env.Key)
	}
	var o cancelOrder
	if err := decodeStrict(env.Payload, &o); err != nil {
		return fmt.Errorf("a cancellation of job %s is signed but does not parse: %v", job.ID, err)
	}
	if o.JobID != job.ID || !bytes.Equal(o.JobSignature, jobSig) {
		return fmt.Errorf("a cancellation signed for job %s is not for this job %s (another id or an older job with its id)", o.JobID, job.ID)
	}
	return nil
}
