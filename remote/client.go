package remote

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/cohort-dev/cohort/internal/safegit"
)

// Client is a lead's side of the queue: it submits signed jobs, follows
// their progress, waits for their results and cancels them. Safe for
// concurrent use; Close once.
type Client struct {
	nc      *nats.Conn
	s       *setup
	signer  *Signer
	workers WorkerKeys
	report  func(jobID string, err error)
	now     func() time.Time
	git     *safegit.Runner

	mu      sync.Mutex
	bundles map[string]*bundleEntry    // by directory and base commit
	sigs    map[string][]byte          // the signature of each job submitted, by id
	sent    map[string][32]byte        // the sha256 of each job's published message, by id
	seqs    map[string]uint64          // each job's sequence in the job stream, by id
	heard   map[string]*Result         // a result of a job submitted, heard as it was published, until a Wait takes it
	waits   map[string]*refusedResults // the Wait following each job
	// refusals are each job's refused results (reported once a job).
	refusals map[string]*refusals
	// answering are the jobs cancelled, whose workers the lead answers
	// (cancelask.go).
	answering map[string]bool
	// jobs are the jobs submitted, as first signed, and attempts how
	// many times each was submitted again (claim.go), by id.
	jobs      map[string]*Job
	attempts  map[string]int
	claimWait time.Duration
}

type bundleEntry struct {
	once   sync.Once
	commit string
	name   string
	err    error
}

// ClientConfig configures a Client.
type ClientConfig struct {
	Config
	Queue  Queue
	Signer *Signer
	// Workers are the workers whose signed results the client takes
	// (required): a result not signed by one of them is refused.
	Workers WorkerKeys
	// Report is told of each result refused (forged, unsigned, signed by
	// a worker not trusted, for another job), once per distinct message
	// (default: a warning on slog's default logger). Wait goes on waiting
	// for the real one.
	Report func(jobID string, err error)
	// Git runs the lead's git calls for bundles (nil: unconfined, with
	// the repository's programs off; package internal/safegit).
	Git *safegit.Runner
	// Now is the clock jobs are stamped with (default time.Now).
	Now func() time.Time
	// ClaimWait is how long a job may be out of the queue without a
	// trusted worker's claim before Wait reports it and submits it again
	// (default DefaultClaimWait, 30s; negative: never).
	ClaimWait time.Duration
}

// Dial connects a lead to the queue, making the streams if they do not
// exist. An unreachable server is an error within ConnectTimeout.
func Dial(ctx context.Context, cfg ClientConfig) (*Client, error) {
	if cfg.Signer == nil {
		return nil, errors.New("remote: a client needs a Signer (the lead's key)")
	}
	if cfg.Workers == nil {
		return nil, errors.New("remote: a client needs Workers (the keys of the workers whose results it takes)")
	}
	report := cfg.Report
	if report == nil {
		report = func(id string, err error) { slog.Warn("remote: result refused", "job", id, "err", err) }
	}
	nc, err := Connect(ctx, cfg.Config)
	if err != nil {
		return nil, err
	}
	s, err := ensure(ctx, nc, namesFor(cfg.prefix()), cfg.Queue, false)
	if err != nil {
		nc.Close()
		return nil, err
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	c := &Client{nc: nc, s: s, signer: cfg.Signer, workers: cfg.Workers, report: report, now: now, git: cfg.Git,
		bundles: map[string]*bundleEntry{}, sigs: map[string][]byte{}, sent: map[string][32]byte{}, seqs: map[string]uint64{},
		heard: map[string]*Result{}, waits: map[string]*refusedResults{}, refusals: map[string]*refusals{}, answering: map[string]bool{},
		jobs: map[string]*Job{}, attempts: map[string]int{}, claimWait: cmp.Or(cfg.ClaimWait, DefaultClaimWait)}
	for _, subject := range []string{s.n.results + ".*", s.n.refused + ".*"} {
		if _, err := nc.Subscribe(subject, c.hear); err != nil {
			nc.Close()
			return nil, fmt.Errorf("remote: follow %s: %w", subject, err)
		}
	}
	return c, nil
}

// Close closes the connection.
func (c *Client) Close() { c.nc.Close() }

// hear takes a result or refusal as it is published, for any job this
// client submitted, whether or not a Wait follows it yet: what the lead
// heard is kept in memory, so a stored result the server drops later
// (the results stream changed to keep one message per subject, then junk
// published; a purge) still reaches Wait. What does not pass is reported
// (once a job, refusals).
func (c *Client) hear(m *nats.Msg) {
	refusal := strings.HasPrefix(m.Subject, c.s.n.refused+".")
	id := m.Subject[strings.LastIndexByte(m.Subject, '.')+1:]
	c.mu.Lock()
	_, ours := c.sigs[id]
	c.mu.Unlock()
	if !ours {
		return
	}
	if r := c.check(id, m.Data, refusal); r != nil {
		c.settle(id, r)
	}
}

// Signer is the key the client signs with.
func (c *Client) Signer() *Signer { return c.signer }

// Submit sends j with the code of rev in the repository at dir: the
// bundle goes to the object store once per base commit, and the job,
// signed, to the work queue with its id as the message id (a retried
// submit is not queued twice). It fills j.Bundle, j.BaseCommit, j.Lead and
// j.Issued.
func (c *Client) Submit(ctx context.Context, j *Job, dir, rev string) error {
	if j.Repository == "" {
		commit, name, err := c.bundle(ctx, dir, rev)
		if err != nil {
			return err
		}
		j.Bundle, j.BaseCommit = name, commit
	}
	data, err := c.signer.Seal(j, c.now())
	if err != nil {
		return err
	}
	if err := j.Validate(); err != nil {
		return err
	}
	var env Envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return err
	}
	c.mu.Lock()
	c.sigs[j.ID] = env.Signature
	c.sent[j.ID] = sha256.Sum256(data)
	kept := *j
	c.jobs[j.ID], c.attempts[j.ID] = &kept, 0
	c.refusals[j.ID] = &refusals{seen: map[[32]byte]bool{}}
	c.mu.Unlock()
	ack, err := c.s.js.Publish(ctx, c.s.n.jobs, data, jetstream.WithMsgID(jobMsgID(j.ID, 0)))
	if err != nil {
		return fmt.Errorf("remote: submit job %s: %w", j.ID, err)
	}
	c.mu.Lock()
	c.seqs[j.ID] = ack.Sequence
	c.mu.Unlock()
	return nil
}

// open checks a result of job id (OpenResult) against the signature of
// the job this client submitted. A refusal of an unverified job
// (refused.<id>) must be a refusal of the very message this client
// published: the signature it quotes is only what the refused message
// carried, which anyone may copy from the wire onto other bytes.
func (c *Client) open(id string, data []byte, refusal bool) (*Result, error) {
	c.mu.Lock()
	sig, sent := c.sigs[id], c.sent[id]
	c.mu.Unlock()
	r, err := OpenResult(c.workers, data, id, sig)
	switch {
	case err != nil:
	case refusal && r.Status != StatusRefused:
		err = fmt.Errorf("a message on job %s's refusal subject, signed by worker %s, is not a refusal (%s)", id, r.Worker, r.Status)
	case refusal && !bytes.Equal(r.Refused, sent[:]):
		err = fmt.Errorf("worker %s refused a message claiming job %s that is not the one this lead published (an altered or relabelled copy carrying the lead's signature, or a refusal from a worker older than this lead): job %s goes on", r.Worker, id, id)
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// refusedResults is one Wait's (or Lookup's) reading of job id's results.
type refusedResults struct {
	c    *Client
	id   string
	live chan *Result // results heard as published, for Wait
	// nextResult and nextRefusal are where the next look-up reads the
	// stored results and refusals from (Wait's goroutine only).
	nextResult, nextRefusal uint64
}

func newRefusedResults(c *Client, id string) *refusedResults {
	return &refusedResults{c: c, id: id, live: make(chan *Result, 1)}
}

func (f *refusedResults) check(data []byte, refusal bool) *Result {
	return f.c.check(f.id, data, refusal)
}

// flush tells the refusals of the job not reported one by one.
func (f *refusedResults) flush() {
	f.c.mu.Lock()
	rep := f.c.refusals[f.id]
	f.c.mu.Unlock()
	if rep != nil {
		rep.flush(f.c, f.id)
	}
}

// refusals reports each refused result of one job once, whether heard
// as published or read from the stream (Wait sees a stored one again at
// every poll). The first maxReports are reported one by one; past them,
// a flood is told as a count at each look-up (flush), so junk costs the
// lead no more than a line a poll.
type refusals struct {
	mu   sync.Mutex
	seen map[[32]byte]bool
	more int // refused past maxReports, not yet told
}

// maxReports is how many refused results of one job are reported one by
// one (refusals); maxSeen bounds the digests remembered per job (past
// it, a repeat is counted again).
const (
	maxReports = 5
	maxSeen    = 4096
)

// check is data, a result (or refusal) of job id, if it passes open;
// else nil, and it is reported once.
func (c *Client) check(id string, data []byte, refusal bool) *Result {
	r, err := c.open(id, data, refusal)
	if err == nil {
		return r
	}
	c.mu.Lock()
	rep := c.refusals[id]
	if rep == nil { // a job this client did not submit
		rep = &refusals{seen: map[[32]byte]bool{}}
		c.refusals[id] = rep
	}
	c.mu.Unlock()
	sum := sha256.Sum256(data)
	rep.mu.Lock()
	first := !rep.seen[sum]
	if first && len(rep.seen) < maxSeen {
		rep.seen[sum] = true
	}
	tell := first && len(rep.seen) <= maxReports
	if first && !tell {
		rep.more++
	}
	rep.mu.Unlock()
	if tell {
		c.report(id, err)
	}
	return nil
}

func (rep *refusals) flush(c *Client, id string) {
	rep.mu.Lock()
	n := rep.more
	rep.more = 0
	rep.mu.Unlock()
	if n > 0 {
		c.report(id, fmt.Errorf("%d more messages on job %s's result subjects were refused (not reported one by one: a flood of junk, or a misconfigured worker)", n, id))
	}
}

// bundle uploads the bundle of rev in dir once per client and commit.
func (c *Client) bundle(ctx context.Context, dir, rev string) (string, string, error) {
	out, err := git(ctx, c.git, dir, nil, nil, "rev-parse", "--verify", "--end-of-options", rev+"^{commit}")
	if err != nil {
		return "", "", fmt.Errorf("remote: %s is not a commit in %s: %w", rev, dir, err)
	}
	commit := strings.TrimSpace(string(out))
	key := dir + "\x00" + commit
	c.mu.Lock()
	e, ok := c.bundles[key]
	if !ok {
		e = &bundleEntry{}
		c.bundles[key] = e
	}
	c.mu.Unlock()
	e.once.Do(func() {
		var data []byte
		e.commit, data, e.err = Bundle(ctx, c.git, dir, commit)
		if e.err != nil {
			return
		}
		e.name = BundleName(data)
		if _, err := c.s.bundles.GetInfo(ctx, e.name); err == nil {
			return // uploaded before, by this lead or another
		}
		if _, err := c.s.bundles.PutBytes(ctx, e.name, data); err != nil {
			e.err = fmt.Errorf("remote: upload the code (%d bytes) to %s: %w", len(data), c.s.n.bundles, err)
		}
	})
	if e.err != nil {
		c.mu.Lock()
		delete(c.bundles, key) // let a later submit try again
		c.mu.Unlock()
	}
	return e.commit, e.name, e.err
}

// Cancel asks the workers to stop job id, which this client submitted: a
// worker running it stops it and reports it cancelled; one that picks it
// up later does not start it. The cancellation is signed (SealCancel): a
// worker refuses one its lead did not sign.
//
// A job still in the queue is also taken out of it (its message deleted
// from the job stream), and if no worker was ever handed it, its result
// is the lead's own: cancelled before it started. The stored cancellation
// alone is not enough for a queued job: anyone with the run of the
// JetStream API can drop it before a worker reads it (a purge of its
// subject, or one message per subject and junk, the shape put back at
// once), and the worker would run the job. A job a worker was handed
// (running, or its worker gone) is left to the worker, which hears the
// cancellation as it is published; once taken out of the queue it is not
// handed to another worker.
func (c *Client) Cancel(ctx context.Context, id string) error {
	c.mu.Lock()
	sig, seq := c.sigs[id], c.seqs[id]
	c.mu.Unlock()
	if sig == nil {
		return fmt.Errorf("remote: cancel job %s: this lead did not submit it", id)
	}
	if err := c.answerCancelled(id, sig); err != nil {
		return fmt.Errorf("remote: cancel job %s: %w", id, err)
	}
	if _, err := c.s.js.Publish(ctx, c.s.n.cancels+"."+id, c.signer.SealCancel(id, sig)); err != nil {
		return fmt.Errorf("remote: cancel job %s: %w", id, err)
	}
	if seq != 0 && c.unqueue(ctx, seq) {
		c.settle(id, &Result{JobID: id, Status: StatusCancelled, Signature: sig,
			Error: "cancelled by the lead before it started: taken out of the queue before any worker took it"})
	}
	return nil
}

// unqueue deletes the job stored at seq from the job stream and reports
// whether no worker was handed it before: the workers' consumer delivers
// in order, so a job past the last sequence it delivered, deleted, will
// never be. Any error (the job was acknowledged and is gone, the server
// is away) is false: the stored cancellation stands, as before.
func (c *Client) unqueue(ctx context.Context, seq uint64) bool {
	st, err := c.s.js.Stream(ctx, c.s.n.jobStream)
	if err != nil || st.DeleteMsg(ctx, seq) != nil {
		return false
	}
	cons, err := st.Consumer(ctx, c.s.n.consumer)
	if errors.Is(err, jetstream.ErrConsumerNotFound) {
		return true // no worker has ever served the queue
	}
	if err != nil {
		return false
	}
	return cons.CachedInfo().Delivered.Stream < seq
}

// settle is job id's result, known to the lead itself: kept as a result
// heard, for Wait.
func (c *Client) settle(id string, r *Result) {
	c.mu.Lock()
	if c.heard[id] == nil {
		c.heard[id] = r
	}
	w := c.waits[id]
	c.mu.Unlock()
	if w != nil {
		select {
		case w.live <- r:
		default:
		}
	}
}

// Wait waits for job id's result and calls progress (from this
// goroutine, in order) for each progress event until then. A result is
// seen as it is published and, since a lead may have been away when it
// was (a reconnect, a server restart), also looked up in the result stream
// at the start and every PollInterval: the stream keeps it. Wait returns
// ctx's error if ctx ends first.
func (c *Client) Wait(ctx context.Context, id string, progress func(Progress)) (*Result, error) {
	prog := make(chan Progress, 64)
	check := newRefusedResults(c, id)
	c.mu.Lock()
	jobSig := c.sigs[id]
	c.mu.Unlock()
	var progressRefused atomic.Bool // reported once a Wait: anyone may flood the subject
	runner := progressFrom{nonce: newNonce()}
	var lastAsk atomic.Int64
	ask := func() { // who runs the job? (at most every askEvery: replays must not make a flood)
		now := time.Now().UnixNano()
		if last := lastAsk.Load(); now-last >= int64(askEvery) && lastAsk.CompareAndSwap(last, now) {
			_ = c.nc.Publish(c.s.n.ask+"."+id, []byte(runner.nonce))
		}
	}
	runner.askAgain = ask
	psub, err := c.nc.Subscribe(c.s.n.progress+"."+id, func(m *nats.Msg) {
		p, err := openProgress(c.workers, m.Data, id, jobSig)
		if err == nil {
			p, err = runner.take(id, p)
		}
		if err != nil {
			if !errors.Is(err, errNoRunnerYet) && !progressRefused.Swap(true) {
				c.report(id, err)
			}
			return
		}
		select {
		case prog <- p:
		default: // the lead is behind: a later event carries the totals
		}
	})
	if err != nil {
		return nil, fmt.Errorf("remote: follow job %s: %w", id, err)
	}
	defer psub.Unsubscribe()
	ask() // a job running already answers at once
	c.mu.Lock()
	if c.waits[id] == nil {
		c.waits[id] = check
		defer func() {
			c.mu.Lock()
			delete(c.waits, id)
			c.mu.Unlock()
		}()
	}
	heard := c.heard[id]
	c.mu.Unlock()
	if heard != nil {
		c.taken(id)
		return heard, nil
	}
	tick := time.NewTicker(PollInterval)
	defer tick.Stop()
	var claim claimWatch
	for {
		// Each look-up has its own deadline: a request sent while the
		// server is away may never be answered.
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		r, err := c.lookup(lctx, id, check)
		if r == nil && err == nil {
			err = c.watchClaim(lctx, id, &claim)
		}
		cancel()
		check.flush()
		if r != nil || (err != nil && !retryable(err)) {
			c.taken(id)
			return r, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case p := <-prog:
			if progress != nil {
				progress(p)
			}
			continue
		case r := <-check.live:
			c.taken(id)
			return r, nil
		case <-tick.C:
		}
	}
}

// PollInterval is how often Wait looks for a result it may have missed.
const PollInterval = 2 * time.Second

// askEvery is how often a Wait that does not know who runs its job may
// ask (progressFrom).
const askEvery = 250 * time.Millisecond

// newNonce is a Wait's question to the worker running its job: 16
// random bytes, in hex.
func newNonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Lookup returns job id's stored result, or nil if there is none yet or
// the one stored is not a result of the job this client submitted,
// signed by a worker it trusts (that one is reported).
func (c *Client) Lookup(ctx context.Context, id string) (*Result, error) {
	check := newRefusedResults(c, id)
	defer check.flush()
	return c.lookup(ctx, id, check)
}

// taken is the result of job id heard as published, which Wait returns:
// it is no longer kept.
func (c *Client) taken(id string) *Result {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.heard[id]
	delete(c.heard, id)
	return r
}

// lookup is the result of job id heard as published, or else the first
// stored one that passes check. The stream's shape is checked first (and
// put back, reported): see setup.stream.
func (c *Client) lookup(ctx context.Context, id string, check *refusedResults) (*Result, error) {
	c.mu.Lock()
	heard := c.heard[id]
	c.mu.Unlock()
	if heard != nil {
		return heard, nil
	}
	st, err := c.s.stream(ctx, c.s.n.resultStream, func(err error) { c.report(id, err) })
	if err != nil {
		return nil, err
	}
	var r *Result
	for _, sub := range []struct {
		subject string
		from    *uint64
		refusal bool
	}{{c.s.n.results + "." + id, &check.nextResult, false}, {c.s.n.refused + "." + id, &check.nextRefusal, true}} {
		// Every message stored on the subject is kept: junk published
		// after the worker's result is read, reported and skipped.
		found, err := scanStored(ctx, st, sub.subject, sub.from, func(data []byte) bool {
			r = check.check(data, sub.refusal)
			return r != nil
		})
		if found || err != nil {
			return r, err
		}
	}
	return nil, nil
}

// retryable reports errors that go away when the server comes back.
func retryable(err error) bool {
	if errors.Is(err, ErrUnclaimed) {
		return false
	}
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.Code >= 500 || errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, jetstream.ErrConsumerNotFound)
	}
	return true
}
