package remote

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"strconv"
	"strings"
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

// progressFrom keeps to the worker running one job, for one Wait. The
// Wait asks who runs the job (a nonce on PREFIX.ask.<id>, askPhase), and
// the worker running it answers with a signed "running" event naming the
// job's delivery it runs and the nonce: only that answer makes a worker
// the job's runner, so an earlier worker's "running", replayed from the
// wire, proves nothing to a Wait that has not seen the job change hands
// (it was signed before this Wait asked). After the answer, a "running"
// event of a later delivery (the job handed to another worker, which
// sends one as it starts and at every heartbeat) makes its worker the
// runner; one of the same delivery or an earlier one does not — nor does
// an answer to the Wait's own question that names an earlier delivery
// than the runner's (its worker answered before the job changed hands,
// or it is replayed from the wire: keyattack6). Events of
// any worker but the runner are refused, and so is every event before
// the answer: the Wait asks again then (askAgain), and the running
// worker's answer comes within a round trip. (A trusted worker that
// claims a job with events of its own is believed, as its signed result
// would be: trusting a worker is trusting what it says of the jobs it
// can see.)
// errNoRunnerYet refuses an event that came before the runner's answer:
// not reported, since every Wait meets it in the normal course.
var errNoRunnerYet = errors.New("no worker has said it runs the job yet")

type progressFrom struct {
	mu       sync.Mutex
	nonce    string // what this Wait asked with
	worker   string // the runner, once it answered
	delivery uint64 // the delivery the runner runs
	askAgain func() // asks again (rate-limited by the caller)
}

// take checks p against the job's running worker and returns it as the
// lead shows it (a "running" event's phase is "running", whatever
// delivery or question it answers).
func (f *progressFrom) take(id string, p Progress) (Progress, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n, asked, ok := runningDelivery(p.Phase); ok {
		switch {
		case asked != "" && asked == f.nonce && n >= f.delivery:
			f.worker, f.delivery = p.Worker, n
		case asked == f.nonce && p.Worker != f.worker:
			// An answer to this very question from the worker of an
			// earlier delivery, after a later one's worker answered or
			// announced itself: sent before the job changed hands, or
			// replayed from the wire since (keyattack6). Not reported:
			// answers from two deliveries can cross on the wire.
			return p, errNoRunnerYet
		case asked != "": // another Wait's question, or a replay of an old answer
			if f.worker != p.Worker {
				return p, errNoRunnerYet
			}
		case f.worker == "":
			if f.askAgain != nil {
				f.askAgain() // the job has started, or the event is a replay: ask who runs it
			}
			return p, errNoRunnerYet
		case n > f.delivery:
			f.worker, f.delivery = p.Worker, n // handed to another worker since
		case p.Worker != f.worker:
			return p, fmt.Errorf("a progress event of job %s says worker %q runs its delivery %d, but worker %q said it runs delivery %d (an earlier worker's event replayed)", id, p.Worker, n, f.worker, f.delivery)
		}
		p.Phase = "running"
	}
	switch f.worker {
	case p.Worker:
		return p, nil
	case "":
		return p, errNoRunnerYet
	}
	return p, fmt.Errorf("a progress event of job %s is signed by worker %q, but worker %q runs it", id, p.Worker, f.worker)
}

// runningPhase is the phase of a worker's "running" event for the n-th
// delivery of a job, answering question asked (a Wait's nonce) or none:
// "running" for the first delivery and no question (what an older worker
// sends for every delivery), else "running (delivery n)" or "running
// (delivery n, asked NONCE)". Kept in the phase, not new fields, so a
// lead older than this one, which reads events strictly, still takes
// them (and shows the phase as it is).
func runningPhase(n uint64, asked string) string {
	switch {
	case asked != "":
		return fmt.Sprintf("running (delivery %d, asked %s)", max(n, 1), asked)
	case n <= 1:
		return "running"
	}
	return fmt.Sprintf("running (delivery %d)", n)
}

// runningDelivery reads runningPhase: the delivery a "running" phase
// names, the question it answers, and whether it is one.
func runningDelivery(phase string) (n uint64, asked string, ok bool) {
	if phase == "running" {
		return 1, "", true
	}
	rest, found := strings.CutPrefix(phase, "running (delivery ")
	if !found {
		return 0, "", false
	}
	rest, found = strings.CutSuffix(rest, ")")
	if !found {
		return 0, "", false
	}
	num, asked, _ := strings.Cut(rest, ", asked ")
	n, err := strconv.ParseUint(num, 10, 64)
	if err != nil || n == 0 || runningPhase(n, asked) != phase || (asked != "" && !validNonce(asked)) {
		return 0, "", false
	}
	return n, asked, true
}

// validNonce is a Wait's question as a worker answers it: 8 to 64
// lowercase hex digits.
func validNonce(s string) bool {
	if len(s) < 8 || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if (r < '0' || r > '9') && (r < 'a' || r > 'f') {
			return false
		}
	}
	return true
}
