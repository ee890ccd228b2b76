package remote

import (
	"bytes"
	"context"
	"crypto/sha256"
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
	bundles map[string]*bundleEntry // by directory and base commit
	sigs    map[string][]byte       // the signature of each job submitted, by id
	sent    map[string][32]byte     // the sha256 of each job's published message, by id
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
	return &Client{nc: nc, s: s, signer: cfg.Signer, workers: cfg.Workers, report: report, now: now, git: cfg.Git,
		bundles: map[string]*bundleEntry{}, sigs: map[string][]byte{}, sent: map[string][32]byte{}}, nil
}

// Close closes the connection.
func (c *Client) Close() { c.nc.Close() }

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
	c.mu.Unlock()
	if _, err := c.s.js.Publish(ctx, c.s.n.jobs, data, jetstream.WithMsgID("job-"+j.ID)); err != nil {
		return fmt.Errorf("remote: submit job %s: %w", j.ID, err)
	}
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

// refusedResults reports each refused result of one job once: Wait sees
// a stored one again at every poll.
type refusedResults struct {
	c    *Client
	id   string
	mu   sync.Mutex
	seen map[[32]byte]bool
	// nextResult and nextRefusal are where the next look-up reads the
	// stored results and refusals from (Wait's goroutine only).
	nextResult, nextRefusal uint64
}

func (f *refusedResults) check(data []byte, refusal bool) *Result {
	r, err := f.c.open(f.id, data, refusal)
	if err == nil {
		return r
	}
	sum := sha256.Sum256(data)
	f.mu.Lock()
	first := !f.seen[sum]
	f.seen[sum] = true
	f.mu.Unlock()
	if first {
		f.c.report(f.id, err)
	}
	return nil
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
func (c *Client) Cancel(ctx context.Context, id string) error {
	c.mu.Lock()
	sig := c.sigs[id]
	c.mu.Unlock()
	if sig == nil {
		return fmt.Errorf("remote: cancel job %s: this lead did not submit it", id)
	}
	if _, err := c.s.js.Publish(ctx, c.s.n.cancels+"."+id, c.signer.SealCancel(id, sig)); err != nil {
		return fmt.Errorf("remote: cancel job %s: %w", id, err)
	}
	return nil
}

// Wait waits for job id's result and calls progress (from this
// goroutine, in order) for each progress event until then. A result is
// seen as it is published and, since a lead may have been away when it
// was (a reconnect, a server restart), also looked up in the result stream
// at the start and every PollInterval: the stream keeps it. Wait returns
// ctx's error if ctx ends first.
func (c *Client) Wait(ctx context.Context, id string, progress func(Progress)) (*Result, error) {
	prog := make(chan Progress, 64)
	live := make(chan *Result, 1)
	check := &refusedResults{c: c, id: id, seen: map[[32]byte]bool{}}
	c.mu.Lock()
	jobSig := c.sigs[id]
	c.mu.Unlock()
	var progressRefused atomic.Bool // reported once a Wait: anyone may flood the subject
	var runner progressFrom
	psub, err := c.nc.Subscribe(c.s.n.progress+"."+id, func(m *nats.Msg) {
		p, err := openProgress(c.workers, m.Data, id, jobSig)
		if err == nil {
			err = runner.take(id, p)
		}
		if err != nil {
			if !progressRefused.Swap(true) {
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
	rsub, err := c.nc.Subscribe(c.s.n.results+"."+id, func(m *nats.Msg) {
		if r := check.check(m.Data, false); r != nil {
			select {
			case live <- r:
			default:
			}
		}
	})
	if err != nil {
		return nil, fmt.Errorf("remote: follow job %s: %w", id, err)
	}
	defer rsub.Unsubscribe()
	refused := make(chan *Result, 1)
	fsub, err := c.nc.Subscribe(c.s.n.refused+"."+id, func(m *nats.Msg) {
		if r := check.check(m.Data, true); r != nil {
			select {
			case refused <- r:
			default:
			}
		}
	})
	if err != nil {
		return nil, fmt.Errorf("remote: follow job %s: %w", id, err)
	}
	defer fsub.Unsubscribe()
	tick := time.NewTicker(PollInterval)
	defer tick.Stop()
	for {
		// Each look-up has its own deadline: a request sent while the
		// server is away may never be answered.
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		r, err := c.lookup(lctx, id, check)
		cancel()
		if r != nil || (err != nil && !retryable(err)) {
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
		case r := <-live:
			return r, nil
		case r := <-refused:
			return r, nil
		case <-tick.C:
		}
	}
}

// PollInterval is how often Wait looks for a result it may have missed.
const PollInterval = 2 * time.Second

// Lookup returns job id's stored result, or nil if there is none yet or
// the one stored is not a result of the job this client submitted,
// signed by a worker it trusts (that one is reported).
func (c *Client) Lookup(ctx context.Context, id string) (*Result, error) {
	return c.lookup(ctx, id, &refusedResults{c: c, id: id, seen: map[[32]byte]bool{}})
}

func (c *Client) lookup(ctx context.Context, id string, check *refusedResults) (*Result, error) {
	st, err := c.s.js.Stream(ctx, c.s.n.resultStream)
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
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		return apiErr.Code >= 500 || errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, jetstream.ErrConsumerNotFound)
	}
	return true
}
