package remote

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// A job counts as taken only through a claim signed by a worker: a
// consumer's ack proves nothing, since anyone who may use the JetStream
// API can pull a job from the workers' consumer and ack it (keyattack6).
// A worker handed a job claims it before it runs it, in the key of the
// job's id in the bucket PREFIX_CLAIMS, by compare-and-set: it creates
// the key, or replaces a value that is not a claim of this job by itself
// or one of its Peers, or a claim of an earlier delivery of this very
// message (the worker that held it lost it after the ack wait). A valid
// claim of another message of the job (the lead's republish, or a copy
// published again) means another worker runs it: this delivery is
// terminated unrun. The lead's Wait watches for the claim (watchClaim):
// a job taken from the queue and claimed by no worker it trusts within
// ClaimWait is reported and submitted again (republish), re-signed with a
// new attempt number and issue time, quoting the first envelope's
// signature, which results, progress, claims and cancellations of every
// attempt quote (the job's lineage).

// claimContext is signed with every claim, so a signature a worker made
// for a result or an event cannot pass for one.
const claimContext = "cohort remote claim v1\n"

// claimOrder is a claim's signed payload: the job, its lineage (the
// lead's signature on its first envelope), the worker, and the delivery
// it claims — the message's sequence in the job stream and the
// consumer's delivery count.
type claimOrder struct {
	JobID        string `json:"job_id"`
	JobSignature []byte `json:"job_signature"`
	Worker       string `json:"worker"`
	Sequence     uint64 `json:"sequence"`
	Delivery     uint64 `json:"delivery"`
}

// sealClaim signs o as this signer's, a worker's.
func (s *Signer) sealClaim(o claimOrder) []byte {
	o.Worker = s.name
	payload := mustJSON(o)
	sig := ed25519.Sign(s.key, append([]byte(claimContext), payload...))
	return mustJSON(Envelope{Key: s.name, Payload: payload, Signature: sig})
}

// openClaim checks a claim of job id: signed by a worker in keys,
// naming it, for this job's lineage jobSig.
func openClaim(keys WorkerKeys, data []byte, id string, jobSig []byte) (claimOrder, error) {
	var env Envelope
	if err := decodeStrict(data, &env); err != nil {
		return claimOrder{}, fmt.Errorf("the claim of job %s is not a signed claim: %v", id, err)
	}
	pub, ok := keys.Key(env.Key)
	if env.Key == "" || !ok {
		return claimOrder{}, fmt.Errorf("the claim of job %s is signed by %q, not a trusted worker", id, env.Key)
	}
	if !ed25519.Verify(pub, append([]byte(claimContext), env.Payload...), env.Signature) {
		return claimOrder{}, fmt.Errorf("the claim of job %s does not verify with worker key %q", id, env.Key)
	}
	var o claimOrder
	if err := decodeStrict(env.Payload, &o); err != nil {
		return claimOrder{}, fmt.Errorf("the claim of job %s is signed but does not parse: %v", id, err)
	}
	switch {
	case o.Worker != env.Key:
		return claimOrder{}, fmt.Errorf("the claim of job %s names worker %q but is signed by %q", id, o.Worker, env.Key)
	case o.JobID != id || len(jobSig) == 0 || !bytes.Equal(o.JobSignature, jobSig):
		return claimOrder{}, fmt.Errorf("the claim stored for job %s is of another job (%s, or an older one with its id)", id, o.JobID)
	}
	return o, nil
}

// claimTries bounds a worker's compare-and-set rounds on one claim: each
// lost round is someone else's write in between.
const claimTries = 8

// claim takes job (lineage jobSig), handed to this worker in m, for this
// delivery. It returns "" once the claim is this worker's, or who holds
// the job otherwise (this delivery is not to run); an error is the
// bucket's (the job is given back).
func (w *Worker) claim(ctx context.Context, m jetstream.Msg, job *Job, jobSig []byte, log *slog.Logger) (string, error) {
	meta, err := m.Metadata()
	if err != nil {
		return "", err
	}
	mine := w.cfg.Signer.sealClaim(claimOrder{JobID: job.ID, JobSignature: jobSig, Sequence: meta.Sequence.Stream, Delivery: meta.NumDelivered})
	for range claimTries {
		e, err := w.s.claims.Get(ctx, job.ID)
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			if _, err := w.s.claims.Create(ctx, job.ID, mine); err == nil {
				return "", nil
			} else if !errors.Is(err, jetstream.ErrKeyExists) {
				return "", err
			}
			continue
		}
		if err != nil {
			return "", err
		}
		held, err := openClaim(selfAndPeers{w}, e.Value(), job.ID, jobSig)
		switch {
		case err != nil:
			log.Warn("the job's stored claim is not one of a trusted worker's for this job; replacing it", "err", err)
		case held.Sequence != meta.Sequence.Stream:
			return fmt.Sprintf("worker %s claimed another copy of it (message %d)", held.Worker, held.Sequence), nil
		case held.Delivery > meta.NumDelivered, held.Delivery == meta.NumDelivered && held.Worker != w.cfg.Signer.Name():
			return fmt.Sprintf("worker %s claimed its delivery %d", held.Worker, held.Delivery), nil
		case held.Delivery == meta.NumDelivered:
			return "", nil // this worker's own claim, made before
		}
		if _, err := w.s.claims.Update(ctx, job.ID, mine, e.Revision()); err == nil {
			return "", nil
		} else if !errors.Is(err, jetstream.ErrKeyExists) {
			return "", err
		}
	}
	return "", fmt.Errorf("the claim of job %s changed %d times while this worker tried to take it", job.ID, claimTries)
}

// DefaultClaimWait is how long a lead waits for a worker's claim of a job
// taken from the queue before it submits the job again (ClientConfig.ClaimWait).
const DefaultClaimWait = 30 * time.Second

// ErrUnclaimed ends the Wait of a job taken from the queue maxAttempts
// times and never claimed by a worker the lead trusts.
var ErrUnclaimed = errors.New("remote: job never claimed")

// maxAttempts bounds how many times a lead submits one job: one theft
// after another ends its Wait with an error.
const maxAttempts = 5

// claimWatch is one Wait's watch for job id's claim.
type claimWatch struct {
	claimed bool
	since   time.Time // when the current attempt was first seen taken from the queue, unclaimed
}

// watchClaim looks once for job id's claim. Once a worker the lead
// trusts has claimed the job, the job is that worker's (as its result
// would be) and the watch ends. Until then, a job taken from the queue —
// delivered, or gone from the job stream — that stays unclaimed for
// claimWait is reported and submitted again. An error ends the Wait: the
// job was taken maxAttempts times.
func (c *Client) watchClaim(ctx context.Context, id string, w *claimWatch) error {
	c.mu.Lock()
	sig, seq, attempt := c.sigs[id], c.seqs[id], c.attempts[id]
	c.mu.Unlock()
	if w.claimed || seq == 0 || c.claimWait <= 0 {
		return nil
	}
	if e, err := c.s.claims.Get(ctx, id); err == nil {
		if _, err := openClaim(c.workers, e.Value(), id, sig); err == nil {
			w.claimed = true
			return nil
		}
	}
	if !c.takenFromQueue(ctx, seq) {
		w.since = time.Time{}
		return nil
	}
	now := time.Now()
	if w.since.IsZero() {
		w.since = now
	}
	if now.Sub(w.since) < c.claimWait {
		return nil
	}
	w.since = time.Time{}
	if attempt+1 >= maxAttempts {
		return fmt.Errorf("%w: job %s was taken from the queue %d times, and never by a worker this lead trusts: someone without a worker's key pulls jobs from the workers' consumer (see that only workers may consume %s)", ErrUnclaimed, id, attempt+1, c.s.n.jobStream)
	}
	c.report(id, fmt.Errorf("job %s was taken from the queue but no worker this lead trusts claimed it within %s (someone without a worker's key took it, or a worker older than this lead): it is submitted again (attempt %d)", id, c.claimWait, attempt+1))
	if err := c.republish(ctx, id); err != nil {
		c.report(id, err) // tried again at the next look
	}
	return nil
}

// takenFromQueue reports whether the job stored at seq has left the
// queue for someone: the workers' consumer delivered it, or it is no
// longer in the job stream (acknowledged or terminated).
func (c *Client) takenFromQueue(ctx context.Context, seq uint64) bool {
	st, err := c.s.js.Stream(ctx, c.s.n.jobStream)
	if err != nil {
		return false
	}
	if _, err := st.GetMsg(ctx, seq); errors.Is(err, jetstream.ErrMsgNotFound) {
		return true
	}
	cons, err := st.Consumer(ctx, c.s.n.consumer)
	return err == nil && cons.CachedInfo().Delivered.Stream >= seq
}

// republish submits job id again: the job as first submitted, with the
// next attempt number and the first envelope's signature (its lineage),
// signed anew (a fresh issue time, which a worker's replay check needs)
// and published with the attempt's own message id.
func (c *Client) republish(ctx context.Context, id string) error {
	c.mu.Lock()
	j, sig, attempt := c.jobs[id], c.sigs[id], c.attempts[id]+1
	c.mu.Unlock()
	if j == nil {
		return nil
	}
	again := *j
	again.Retry = &Retry{Attempt: attempt, Of: sig}
	data, err := c.signer.Seal(&again, c.now())
	if err != nil {
		return err
	}
	ack, err := c.s.js.Publish(ctx, c.s.n.jobs, data, jetstream.WithMsgID(jobMsgID(id, attempt)))
	if err != nil {
		return fmt.Errorf("remote: submit job %s again: %w", id, err)
	}
	c.mu.Lock()
	c.seqs[id], c.attempts[id] = ack.Sequence, attempt
	c.mu.Unlock()
	return nil
}

// jobMsgID is the message id of a job's attempt: job-<id> for the first
// (as before attempts), job-<id>.<n> after (a job id has no dot).
func jobMsgID(id string, attempt int) string {
	if attempt == 0 {
		return "job-" + id
	}
	return fmt.Sprintf("job-%s.%d", id, attempt)
}
