package remote

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cohort-dev/cohort/internal/safegit"
	"github.com/cohort-dev/cohort/sandbox"
)

// Runner runs one capped job in dir, a fresh clone at the job's base
// commit, and reports each tool call through progress. Its error fails the
// job with the error's text as the reason (a missing model key, a model
// that refuses); it is not retried. ctx ends at the job's wall time or
// when the lead cancels it.
type Runner func(ctx context.Context, job *Job, run *Run, dir string, progress func(Progress)) (Outcome, error)

// Outcome is what a Runner returns for a finished agent.
type Outcome struct {
	Text  string
	Usage Usage
}

// WorkerConfig configures a Worker.
type WorkerConfig struct {
	Config
	Queue Queue
	// Keyring holds the leads whose jobs this worker runs (required).
	Keyring *Keyring
	// Signer is the worker's own key (required): it signs every result,
	// and a lead takes only results signed by a worker in its
	// trusted_workers file. Its name is the worker's name in results.
	Signer *Signer
	// Peers are other workers whose stored results this one believes
	// when a job is redelivered after its result was stored (optional:
	// without it only its own count, and such a job runs again).
	Peers WorkerKeys
	// SubmitWindow is how far apart a job's signed issue time and the
	// time the server stored it may be (default 5 minutes, at most the job
	// stream's 10-minute duplicate window): a job stored later is a
	// replay and is dropped unrun. It is also the clock skew allowed
	// between a lead and the server.
	SubmitWindow time.Duration
	Policy       Policy
	Run          Runner
	// Concurrency is how many jobs run at once (default 1).
	Concurrency int
	// Dir is where job clones are made, one directory per job, removed
	// after it (default a temporary directory).
	Dir string
	// Name names the worker in its connection and log (default the
	// Signer's name; results and progress always carry the Signer's).
	Name string
	// Log receives the worker's account of each job (default: discard).
	Log *slog.Logger
	Now func() time.Time
	// Git runs the worker's own git calls on a job's checkout, which the
	// job's agent wrote (package internal/safegit). Nil: the worker
	// confines them with a sandbox of its own while it serves (read-only
	// but where a call must write the checkout, no network), and runs
	// them unconfined, the repository's programs still off, where this
	// system has no sandbox.
	Git *safegit.Runner
}

// Worker pulls jobs from the queue and runs them. Serve once.
type Worker struct {
	cfg WorkerConfig
	nc  *nats.Conn
	s   *setup
}

// NewWorker connects to the queue (making the streams if needed).
func NewWorker(ctx context.Context, cfg WorkerConfig) (*Worker, error) {
	switch {
	case cfg.Keyring == nil || cfg.Keyring.Len() == 0:
		return nil, errors.New("remote: the worker trusts no lead: give it a trust file with the public keys of the leads whose jobs it runs (cohort worker --trust FILE)")
	case cfg.Run == nil:
		return nil, errors.New("remote: the worker has no Runner")
	case cfg.Signer == nil:
		return nil, errors.New("remote: the worker has no key (Signer): it signs every result with it, and leads take only results signed by a worker they trust")
	case cfg.SubmitWindow > jobDuplicates:
		return nil, fmt.Errorf("remote: the worker's submit window %s is longer than the job stream's duplicate window %s, inside which a replay is dropped", cfg.SubmitWindow, jobDuplicates)
	}
	if cfg.SubmitWindow <= 0 {
		cfg.SubmitWindow = 5 * time.Minute
	}
	if err := cfg.Policy.Validate(); err != nil {
		return nil, err
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 1
	}
	if cfg.Name == "" {
		cfg.Name = cfg.Signer.Name()
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Queue = cfg.Queue.withDefaults()
	if cfg.Config.Name == "" {
		cfg.Config.Name = "cohort worker " + cfg.Name
	}
	nc, err := Connect(ctx, cfg.Config)
	if err != nil {
		return nil, err
	}
	s, err := ensure(ctx, nc, namesFor(cfg.prefix()), cfg.Queue, true)
	if err != nil {
		nc.Close()
		return nil, err
	}
	return &Worker{cfg: cfg, nc: nc, s: s}, nil
}

// Serve runs jobs until ctx ends, then gives the jobs still running back
// to the queue (they are redelivered to another worker) and closes the
// connection. It returns nil after a shutdown by ctx.
func (w *Worker) Serve(ctx context.Context) error {
	defer w.nc.Close()
	if w.cfg.Git == nil {
		g, closeSandbox := ownGit()
		defer closeSandbox()
		w.cfg.Git = g
	}
	dir := w.cfg.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "cohort-worker-*")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	var wg sync.WaitGroup
	for slot := range w.cfg.Concurrency {
		wg.Go(func() { w.slot(ctx, filepath.Join(dir, fmt.Sprint(slot))) })
	}
	wg.Wait()
	return nil
}

// slot takes one job at a time: it pulls only while idle, so a job never
// waits in this worker's buffer while another worker is free.
func (w *Worker) slot(ctx context.Context, dir string) {
	failing := false // log the first failure of a run, not every retry
	for ctx.Err() == nil {
		fctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		batch, err := w.s.consumer.Fetch(1, jetstream.FetchContext(fctx))
		if err != nil {
			cancel()
			if !failing && ctx.Err() == nil {
				w.cfg.Log.Warn("cannot fetch jobs; retrying", "err", err)
			}
			failing = true
			sleep(ctx, 250*time.Millisecond)
			continue
		}
		if failing {
			w.cfg.Log.Info("fetching jobs again")
			failing = false
		}
		for m := range batch.Messages() {
			w.handle(ctx, m, dir)
		}
		cancel()
	}
}

// handle runs one delivery of a job. The result is stored before the job
// is acknowledged; a delivery that ends without a result (the worker shut
// down, or a failure another worker may not have) is given back.
func (w *Worker) handle(ctx context.Context, m jetstream.Msg, dir string) {
	meta, _ := m.Metadata()
	delivered := uint64(1)
	if meta != nil {
		delivered = meta.NumDelivered
	}
	log := w.cfg.Log.With("delivery", delivered)
	job, err := w.cfg.Keyring.Open(m.Data(), w.cfg.Now())
	if job == nil {
		// Not even an id to answer to: end it, do not redeliver it.
		log.Error("undecodable job terminated", "err", err)
		_ = m.TermWithReason("undecodable: " + clip(err.Error(), 200))
		return
	}
	log = log.With("job", job.ID)
	var ref *Refusal
	if errors.As(err, &ref) && ref.Unverified {
		w.refuseUnverified(m, job.ID, ref, log)
		return
	}
	if !errors.Is(err, ErrDecode) {
		if why := w.replayed(m, job); why != "" {
			// No result: the job's own may be stored, and the lead's
			// signature on this copy is genuine.
			log.Warn("replayed job dropped unrun", "why", why)
			_ = m.TermWithReason("replayed: " + clip(why, 200))
			return
		}
	}
	jobSig := envelopeSignature(m.Data())
	if job.Retry != nil && err == nil {
		jobSig = job.Retry.Of // every attempt answers as the first (claim.go)
	}
	if err != nil {
		status := StatusRefused
		if errors.Is(err, ErrDecode) {
			status = StatusFailed
		}
		log.Warn("job refused", "err", err)
		w.finish(ctx, m, &Result{JobID: job.ID, Status: status, Error: err.Error(), Signature: jobSig}, log)
		return
	}
	// Only a job handed out before can have a result stored (the work
	// queue gives a job to one worker at a time, and a copy published
	// again is a replay, dropped above): a first delivery does not read
	// the results stream, which anyone may fill with junk.
	if delivered > 1 && w.storedResult(ctx, job.ID, jobSig) {
		log.Info("result already stored; acknowledging the redelivery")
		_ = m.Ack()
		return
	}
	holder, err := w.claim(ctx, m, job, jobSig, log)
	switch {
	case err != nil && ctx.Err() == nil:
		log.Warn("cannot claim the job; giving it back", "err", err)
		_ = m.NakWithDelay(time.Second)
		return
	case err != nil:
		_ = m.Nak()
		return
	case holder != "":
		// No result: the worker that holds the claim stores it.
		log.Info("job claimed by another worker; dropped unrun", "holder", holder)
		_ = m.TermWithReason("claimed: " + clip(holder, 200))
		return
	}
	if w.cancelled(ctx, job, jobSig, log) || w.leadCancelled(ctx, job, jobSig, log) {
		w.finish(ctx, m, &Result{JobID: job.ID, Status: StatusCancelled, Error: "cancelled by the lead before it started", Signature: jobSig}, log)
		return
	}
	run, err := w.cfg.Policy.Apply(job)
	if err != nil {
		log.Warn("job refused by policy", "err", err)
		w.finish(ctx, m, &Result{JobID: job.ID, Status: StatusRefused, Error: err.Error(), Signature: jobSig}, log)
		return
	}
	res, retry := w.execute(ctx, m, job, jobSig, run, filepath.Join(dir, job.ID), log)
	if retry != nil {
		if delivered < uint64(w.cfg.Queue.MaxDeliver) && ctx.Err() == nil {
			log.Warn("job failed on this worker; giving it back", "err", retry)
			_ = m.NakWithDelay(time.Second)
			return
		}
		if ctx.Err() != nil {
			log.Info("shutting down; giving the job back")
			_ = m.Nak()
			return
		}
		res = &Result{JobID: job.ID, Status: StatusFailed, Error: fmt.Sprintf("gave up after %d deliveries: %v", delivered, retry)}
	}
	res.Capped, res.Signature = run.Capped, jobSig
	w.finish(ctx, m, res, log)
}

// execute runs a capped job: heartbeats, the cancel subscription, the
// clone, the runner, the patch. A non-nil retry error is a failure of this
// worker's (the code could not be fetched, the worker is stopping), for
// which the job goes back to the queue.
func (w *Worker) execute(ctx context.Context, m jetstream.Msg, job *Job, jobSig []byte, run *Run, dir string, log *slog.Logger) (res *Result, retry error) {
	jctx, cancel := context.WithTimeout(ctx, run.WallTime)
	defer cancel()
	var cancelledByLead bool
	var mu sync.Mutex
	sub, err := w.nc.Subscribe(w.s.n.cancels+"."+job.ID, func(c *nats.Msg) {
		if err := w.cfg.Keyring.OpenCancel(c.Data, job, jobSig); err != nil {
			log.Warn("cancellation refused; the job keeps running", "err", err)
			return
		}
		mu.Lock()
		cancelledByLead = true
		mu.Unlock()
		cancel()
	})
	if err != nil {
		return nil, err
	}
	defer sub.Unsubscribe()
	progress := func(p Progress) {
		p.JobID = job.ID // SealProgress names the signer as the worker
		_ = w.nc.Publish(w.s.n.progress+"."+job.ID, w.cfg.Signer.SealProgress(p, jobSig))
	}
	delivery := uint64(1)
	if meta, err := m.Metadata(); err == nil {
		delivery = meta.NumDelivered
	}
	runningNow := Progress{Phase: runningPhase(delivery, "")} // which delivery: an earlier worker's replayed is older
	var running atomic.Bool
	stopBeat := w.heartbeat(jctx, m, func() {
		if running.Load() {
			progress(runningNow) // for a lead that began to wait after the first
		}
	})
	defer stopBeat()
	// A lead's Wait asks who runs the job; the answer, signed, quotes its
	// question, so no earlier worker's "running" can pass for it.
	asks, err := w.nc.Subscribe(w.s.n.ask+"."+job.ID, func(q *nats.Msg) {
		if nonce := string(q.Data); running.Load() && validNonce(nonce) {
			progress(Progress{Phase: runningPhase(delivery, nonce)})
		}
	})
	if err != nil {
		return nil, err
	}
	defer asks.Unsubscribe()

	defer os.RemoveAll(dir)
	_ = os.RemoveAll(dir) // a clone left by an earlier delivery on this worker
	if err := w.clone(jctx, job, dir); err != nil {
		return nil, err
	}
	start := time.Now()
	progress(runningNow)
	running.Store(true)
	log.Info("job started", "model", run.Model, "mode", run.Mode)
	oc, runErr := w.cfg.Run(jctx, job, run, dir, progress)
	oc.Usage.DurationMs = time.Since(start).Milliseconds()
	mu.Lock()
	byLead := cancelledByLead
	mu.Unlock()
	switch {
	case byLead:
		return &Result{JobID: job.ID, Status: StatusCancelled, Error: "stopped by the lead", Usage: oc.Usage, Text: oc.Text}, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case runErr != nil && jctx.Err() != nil:
		return &Result{JobID: job.ID, Status: StatusFailed, Error: fmt.Sprintf("the job ran past its wall time of %s", run.WallTime), Usage: oc.Usage}, nil
	case runErr != nil:
		return &Result{JobID: job.ID, Status: StatusFailed, Error: runErr.Error(), Usage: oc.Usage}, nil
	}
	pctx, pcancel := context.WithTimeout(ctx, time.Minute)
	defer pcancel()
	patch, err := MakePatch(pctx, w.cfg.Git, dir, job.BaseCommit)
	if err != nil {
		return &Result{JobID: job.ID, Status: StatusFailed, Error: "the agent finished but its changes could not be collected: " + err.Error(), Usage: oc.Usage, Text: oc.Text}, nil
	}
	return &Result{JobID: job.ID, Status: StatusCompleted, Text: oc.Text, Usage: oc.Usage, Patch: patch}, nil
}

// heartbeat tells the server the job is alive at a third of the ack wait,
// so that only a worker that died (or hung) loses its job, and calls also
// each time.
func (w *Worker) heartbeat(ctx context.Context, m jetstream.Msg, also func()) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(w.cfg.Queue.AckWait / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				_ = m.InProgress()
				also()
			}
		}
	}()
	return func() { cancel(); <-done }
}

// clone fetches the job's bundle, checks it against the signed digest,
// and checks it out.
func (w *Worker) clone(ctx context.Context, job *Job, dir string) error {
	if job.Repository != "" {
		// A clone over the network, into a directory no agent has
		// written yet: outside the sandbox, which has no network; the
		// repository's programs stay off all the same.
		net := &safegit.Runner{Git: w.cfg.Git.Git, Env: w.cfg.Git.Env, Timeout: w.cfg.Git.Timeout}
		if _, err := git(ctx, net, "", nil, nil, "clone", "-q", "--no-checkout", "--template=", "--", job.Repository, dir); err != nil {
			return err
		}
		_, err := git(ctx, w.cfg.Git, dir, []string{dir}, nil, "checkout", "-q", "--detach", job.BaseCommit)
		return err
	}
	data, err := w.s.bundles.GetBytes(ctx, job.Bundle)
	if err != nil {
		return fmt.Errorf("fetch the code (%s): %w", job.Bundle, err)
	}
	sum := sha256.Sum256(data)
	if "sha256-"+hex.EncodeToString(sum[:]) != job.Bundle {
		return fmt.Errorf("the code in %s does not match its digest", job.Bundle)
	}
	return Clone(ctx, w.cfg.Git, data, dir, job.BaseCommit)
}

// finish stores res (once: its message id is the job's) and then
// acknowledges the job. If the result cannot be stored, the job is not
// acknowledged and will be redelivered.
func (w *Worker) finish(ctx context.Context, m jetstream.Msg, res *Result, log *slog.Logger) {
	data := w.cfg.Signer.SealResult(res)
	// Store even while shutting down: the work is done.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	for {
		_, err := w.s.js.Publish(sctx, w.s.n.results+"."+res.JobID, data, jetstream.WithMsgID(resultMsgID(res.JobID, data)))
		if err == nil {
			break
		}
		if sctx.Err() != nil {
			log.Error("result not stored; the job will be redelivered", "err", err)
			return
		}
		sleep(sctx, 250*time.Millisecond)
	}
	if err := m.DoubleAck(sctx); err != nil {
		log.Warn("ack", "err", err) // redelivered; the stored result answers it
	}
	if res.Status == StatusCompleted {
		log.Info("job finished", "status", res.Status)
		return
	}
	log.Warn("job finished", "status", res.Status, "why", res.Error)
}

// refuseUnverified ends a job whose signature did not verify. Its id is
// only the message's claim, so the refusal is not stored as that job's
// result (a forger could fail anyone's job by its id); it is stored on
// PREFIX.refused.<id>, naming the sha256 of the exact message refused
// (Result.Refused), so only the lead that published those very bytes
// takes it: a copy of the lead's signature on an altered or relabelled
// payload is refused for nobody. A message that is not a lead's own
// publish (its message id is not job-<id>, which the job stream drops
// as a duplicate) is terminated without a refusal: a lead that
// published it would have given it that id.
func (w *Worker) refuseUnverified(m jetstream.Msg, id string, ref *Refusal, log *slog.Logger) {
	log.Warn("job refused", "err", ref.Reason)
	if got := m.Headers().Get(jetstream.MsgIDHeader); got != "job-"+id {
		log.Warn("refusal not stored: the message is not a lead's publish", "msg_id", got)
		_ = m.TermWithReason("refused: " + clip(ref.Reason, 200))
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sum := sha256.Sum256(m.Data())
	if _, err := w.s.js.Publish(ctx, w.s.n.refused+"."+id, w.cfg.Signer.SealResult(&Result{JobID: id, Status: StatusRefused, Error: ref.Reason,
		Signature: envelopeSignature(m.Data()), Refused: sum[:]})); err != nil {
		log.Warn("refusal not stored", "err", err)
	}
	_ = m.TermWithReason("refused: " + clip(ref.Reason, 200))
}

// storedResult reports whether a result of this very job (the envelope
// signed jobSig) is stored, signed by this worker or one of its Peers. A
// result anyone else stored does not count: the job runs.
func (w *Worker) storedResult(ctx context.Context, id string, jobSig []byte) bool {
	st, err := w.s.stream(ctx, w.s.n.resultStream, func(err error) { w.cfg.Log.Warn("results stream changed", "job", id, "err", err) })
	if err != nil {
		return false
	}
	var from uint64
	var last error
	refused := 0
	found, _ := scanStored(ctx, st, w.s.n.results+"."+id, &from, func(data []byte) bool {
		_, err := OpenResult(selfAndPeers{w}, data, id, jobSig)
		if err != nil {
			last = err
			refused++
		}
		return err == nil
	})
	if !found && last != nil {
		w.cfg.Log.Warn("no stored result of this job is one a trusted worker made; running the job", "job", id, "refused", refused, "last", last)
	}
	return found
}

// selfAndPeers are the workers whose stored results a worker believes:
// itself, then its Peers.
type selfAndPeers struct{ w *Worker }

func (k selfAndPeers) Key(name string) (ed25519.PublicKey, bool) {
	if s := k.w.cfg.Signer; name == s.Name() {
		return s.key.Public().(ed25519.PublicKey), true
	}
	if k.w.cfg.Peers != nil {
		return k.w.cfg.Peers.Key(name)
	}
	return nil, false
}

// replayed says why a verified job's message is a replay, or "": it must
// be the lead's own publish (message id job-<id>, which the job stream
// drops as a duplicate for 10 minutes), stored by the server within
// SubmitWindow of the job's signed issue time. A copy published again
// later, with or without that id, is dropped unrun, whatever happened to
// the job's stored result.
func (w *Worker) replayed(m jetstream.Msg, job *Job) string {
	want := jobMsgID(job.ID, 0)
	if job.Retry != nil {
		want = jobMsgID(job.ID, job.Retry.Attempt)
	}
	if got := m.Headers().Get(jetstream.MsgIDHeader); got != want {
		return fmt.Sprintf("the message's id is %q, not the lead's %q: a copy of the job published again", got, want)
	}
	meta, err := m.Metadata()
	if err != nil {
		return "the job's stored time cannot be read: " + err.Error()
	}
	gap := meta.Timestamp.Sub(job.Issued)
	if gap > w.cfg.SubmitWindow || -gap > w.cfg.SubmitWindow {
		return fmt.Sprintf("the server stored the job %s after the lead issued it (allowed: %s either way): a copy published again, or a lead clock far from the server's", gap.Round(time.Second), w.cfg.SubmitWindow)
	}
	return ""
}

// envelopeSignature is the lead's signature on a job's envelope, which
// every result of the job quotes.
func envelopeSignature(data []byte) []byte {
	var env Envelope
	_ = json.Unmarshal(data, &env)
	return env.Signature
}

// cancelled says whether the lead cancelled job (envelope signature
// jobSig) before it started: the stored cancellation must be its lead's
// (OpenCancel); another is logged and the job runs.
func (w *Worker) cancelled(ctx context.Context, job *Job, jobSig []byte, log *slog.Logger) bool {
	st, err := w.s.stream(ctx, w.s.n.cancelStream, func(err error) { log.Warn("cancellations stream changed", "err", err) })
	if err != nil {
		return false
	}
	var from uint64
	refused := 0
	found, _ := scanStored(ctx, st, w.s.n.cancels+"."+job.ID, &from, func(data []byte) bool {
		err := w.cfg.Keyring.OpenCancel(data, job, jobSig)
		if err == nil {
			return true
		}
		// The first few one by one, then a count: a flood of junk must not
		// flood the log.
		if refused++; refused <= maxReports {
			log.Warn("stored cancellation refused", "err", err)
		}
		return false
	})
	if refused > maxReports {
		log.Warn("more stored cancellations refused", "count", refused-maxReports)
	}
	return found
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// ownGit is the runner of a worker's git calls when none was given: one
// confined by a sandbox of the worker's own, closed when it stops serving.
func ownGit() (*safegit.Runner, func()) {
	sb, err := sandbox.New(sandbox.Config{SessionID: "worker", DenyNetwork: true})
	if err != nil {
		return &safegit.Runner{}, func() {}
	}
	return &safegit.Runner{Sandbox: sb.Helper}, func() { _ = sb.Close() }
}
