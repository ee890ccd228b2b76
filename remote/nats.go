package remote

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/internal/lazyre"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Config says how to reach NATS and which subjects to use. Leads and
// workers that share a Prefix share a queue.
type Config struct {
	// URL is the server (or a comma-separated list of a cluster's
	// servers): nats://host:4222, tls://host:4222.
	URL string
	// Prefix starts every subject and names the streams; one per tenant
	// keeps tenants apart on one cluster (default "cohort").
	Prefix string
	// Credentials is a NATS .creds file (a user JWT and its nkey seed).
	Credentials string
	// TLSCA, TLSCert and TLSKey are PEM files: the CA that signed the
	// servers' certificates, and a client certificate and key for
	// servers that ask for one.
	TLSCA, TLSCert, TLSKey string
	// ConnectTimeout bounds the first connection (default 5s): an
	// unreachable server is an error, never a hang.
	ConnectTimeout time.Duration
	// Name names the connection in the server's monitoring.
	Name string
}

var prefixPattern = lazyre.New(`^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$`)

func (c Config) prefix() string {
	if c.Prefix == "" {
		return "cohort"
	}
	return c.Prefix
}

// names are a prefix's subjects, streams and buckets.
type names struct {
	jobs, results, cancels, progress, refused, ask, cancelled string // subjects (all but jobs take a job id after a dot)
	jobStream, resultStream, cancelStream                     string
	bundles, consumer, claims                                 string
}

func namesFor(prefix string) names {
	up := strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(prefix))
	return names{
		jobs: prefix + ".jobs", results: prefix + ".results", cancels: prefix + ".cancel", progress: prefix + ".progress",
		refused: prefix + ".refused", ask: prefix + ".ask", cancelled: prefix + ".cancelled",
		jobStream: up + "_JOBS", resultStream: up + "_RESULTS", cancelStream: up + "_CANCELS",
		bundles: up + "_BUNDLES", consumer: "workers", claims: up + "_CLAIMS",
	}
}

// Connect opens a connection to NATS. A server that cannot be reached
// within ConnectTimeout is an error that says where it looked and what to
// do; once connected, the client reconnects for as long as it is open.
func Connect(ctx context.Context, c Config) (*nats.Conn, error) {
	if c.URL == "" {
		return nil, errors.New("remote: no NATS server configured: pass --nats URL (nats://host:4222) or set remote.nats in settings")
	}
	if !prefixPattern.MatchString(c.prefix()) {
		return nil, fmt.Errorf("remote: subject prefix %q: want dot-separated tokens of letters, digits, '_' and '-'", c.Prefix)
	}
	timeout := c.ConnectTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		timeout = time.Until(dl)
	}
	opts := []nats.Option{nats.Timeout(timeout), nats.MaxReconnects(-1), nats.ReconnectWait(250 * time.Millisecond),
		nats.Name(c.Name)}
	if c.Credentials != "" {
		opts = append(opts, nats.UserCredentials(c.Credentials))
	}
	if c.TLSCA != "" {
		opts = append(opts, nats.RootCAs(c.TLSCA))
	}
	if c.TLSCert != "" || c.TLSKey != "" {
		opts = append(opts, nats.ClientCert(c.TLSCert, c.TLSKey))
	}
	nc, err := nats.Connect(c.URL, opts...)
	if err != nil {
		return nil, fmt.Errorf("remote: cannot reach NATS at %s: %v (is the server running, and is the URL right? check --nats, the credentials and the TLS files)", c.URL, err)
	}
	return nc, nil
}

// Queue tunes the queue: the first of leads and workers to start creates
// the streams, and later ones update them; the consumer's ack wait and
// max deliveries are the workers' (the last worker to start sets them).
type Queue struct {
	// AckWait is how long a job may go without a heartbeat before it is
	// given to another worker (default 30s; workers heartbeat at a third
	// of it).
	AckWait time.Duration
	// MaxDeliver is how many times a job is handed out before it is given
	// up (default 5): a job that keeps killing its workers ends.
	MaxDeliver int
	// Replicas is the streams' replica count on a cluster (default 1).
	Replicas int
	// Retention bounds how long results, cancellations and bundles are
	// kept (default 7 days).
	Retention time.Duration
}

func (q Queue) withDefaults() Queue {
	if q.AckWait <= 0 {
		q.AckWait = 30 * time.Second
	}
	if q.MaxDeliver <= 0 {
		q.MaxDeliver = 5
	}
	if q.Replicas <= 0 {
		q.Replicas = 1
	}
	if q.Retention <= 0 {
		q.Retention = 7 * 24 * time.Hour
	}
	return q
}

// jobDuplicates is how long the job stream drops a second message with a
// job's message id: a worker's SubmitWindow is at most this.
const jobDuplicates = 10 * time.Minute

// setup makes (or updates) the streams, the object store and the workers'
// consumer for n.
type setup struct {
	js       jetstream.JetStream
	n        names
	consumer jetstream.Consumer
	bundles  jetstream.ObjectStore
	// claims are the workers' claims of jobs, by job id (claim.go).
	claims jetstream.KeyValue
	// want is the results' and cancellations' streams' shape (stream).
	want map[string]jetstream.StreamConfig
}

// Only workers make the consumer (withConsumer): its ack wait and max
// deliveries are theirs to set, and a lead connecting later must not
// reset them.
func ensure(ctx context.Context, nc *nats.Conn, n names, q Queue, withConsumer bool) (*setup, error) {
	q = q.withDefaults()
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	streams := []jetstream.StreamConfig{
		{Name: n.jobStream, Subjects: []string{n.jobs}, Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage,
			Replicas: q.Replicas, Duplicates: jobDuplicates, MaxMsgSize: MaxJobBytes * 2},
		{Name: n.resultStream, Subjects: []string{n.results + ".*", n.refused + ".*"}, Storage: jetstream.FileStorage, Replicas: q.Replicas,
			MaxAge: q.Retention, Duplicates: 10 * time.Minute, MaxMsgsPerSubject: -1},
		{Name: n.cancelStream, Subjects: []string{n.cancels + ".*"}, Storage: jetstream.FileStorage, Replicas: q.Replicas,
			MaxAge: q.Retention, MaxMsgsPerSubject: -1},
	}
	for _, cfg := range streams {
		if _, err := js.CreateOrUpdateStream(ctx, cfg); err != nil {
			return nil, fmt.Errorf("remote: set up stream %s: %w (does the account have JetStream enabled?)", cfg.Name, err)
		}
	}
	var cons jetstream.Consumer
	if withConsumer {
		cons, err = js.CreateOrUpdateConsumer(ctx, n.jobStream, jetstream.ConsumerConfig{Durable: n.consumer,
			AckPolicy: jetstream.AckExplicitPolicy, AckWait: q.AckWait, MaxDeliver: q.MaxDeliver, FilterSubject: n.jobs,
			MaxAckPending: -1})
		if err != nil {
			return nil, fmt.Errorf("remote: set up consumer %s on %s: %w", n.consumer, n.jobStream, err)
		}
	}
	obj, err := js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: n.bundles, Storage: jetstream.FileStorage,
		Replicas: q.Replicas, TTL: q.Retention})
	if err != nil {
		return nil, fmt.Errorf("remote: set up object store %s: %w", n.bundles, err)
	}
	claims, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: n.claims, Storage: jetstream.FileStorage,
		Replicas: q.Replicas, TTL: q.Retention})
	if err != nil {
		return nil, fmt.Errorf("remote: set up bucket %s: %w", n.claims, err)
	}
	return &setup{js: js, n: n, consumer: cons, bundles: obj, claims: claims,
		want: map[string]jetstream.StreamConfig{n.resultStream: streams[1], n.cancelStream: streams[2]}}, nil
}

// scanStored calls take with each message stored on subject in st from
// sequence *from on, oldest first, until take returns true (then it
// returns true). *from is left past the last message read, so a reader
// that looks again reads only what came since: the result and
// cancellation streams keep every message of a subject (no publish
// displaces a signed one), and a flood of junk is read once. The first
// message is read by a direct look-up (the usual case: one message, one
// request); any more through a short-lived consumer, scanBatch at a
// request, so ten thousand junk messages cost the reader some twenty
// requests, not ten thousand.
func scanStored(ctx context.Context, st jetstream.Stream, subject string, from *uint64, take func(data []byte) bool) (bool, error) {
	if *from == 0 {
		*from = 1
	}
	m, err := st.GetMsg(ctx, *from, jetstream.WithGetMsgSubject(subject))
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	*from = m.Sequence + 1
	if take(m.Data) {
		return true, nil
	}
	return scanBatches(ctx, st, subject, from, take)
}

// scanBatch is how many stored messages one request of scanBatches reads.
const scanBatch = 512

// scanBatches is scanStored's reader of the messages after the first: an
// ephemeral consumer (in memory, no acks, removed when done, or by the
// server after a minute unused) read with no-wait fetches until no
// message is left.
func scanBatches(ctx context.Context, st jetstream.Stream, subject string, from *uint64, take func(data []byte) bool) (bool, error) {
	c, err := st.CreateConsumer(ctx, jetstream.ConsumerConfig{FilterSubject: subject, DeliverPolicy: jetstream.DeliverByStartSequencePolicy,
		OptStartSeq: *from, AckPolicy: jetstream.AckNonePolicy, MemoryStorage: true, InactiveThreshold: time.Minute, Replicas: 1})
	if err != nil {
		return false, err
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = st.DeleteConsumer(dctx, c.CachedInfo().Name)
	}()
	for ctx.Err() == nil {
		batch, err := c.FetchNoWait(scanBatch)
		if err != nil {
			return false, err
		}
		n, left := 0, uint64(1)
		for m := range batch.Messages() {
			meta, err := m.Metadata()
			if err != nil {
				return false, err
			}
			n, left, *from = n+1, meta.NumPending, meta.Sequence.Stream+1
			if take(m.Data()) {
				return true, nil
			}
		}
		if err := batch.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && n == 0 {
			return false, err
		}
		if n == 0 || left == 0 {
			return false, nil
		}
	}
	return false, ctx.Err()
}

// stream returns stream name, put back in the shape ensure gave it first
// if someone changed it since (what changed is told to report). Leads
// and workers set the shape when they connect; a client that changes it
// later (a raw client, a lead or worker older than this that connects)
// could make the server drop stored results and cancellations — one
// message per subject lets junk displace a signed result — so every
// read of a stored result or cancellation checks it first.
func (s *setup) stream(ctx context.Context, name string, report func(error)) (jetstream.Stream, error) {
	st, err := s.js.Stream(ctx, name)
	if err != nil {
		return nil, err
	}
	want, ok := s.want[name]
	if !ok {
		return st, nil
	}
	why := shapeChanged(st.CachedInfo().Config, want)
	if why == "" {
		return st, nil
	}
	_, err = s.js.UpdateStream(ctx, want)
	if err != nil {
		report(fmt.Errorf("the stream %s was changed (%s), so the server may drop stored results or cancellations, and putting it back failed: %w (see that only cohort leads and workers of one version manage the prefix's streams)", name, why, err))
		return st, nil
	}
	report(fmt.Errorf("the stream %s was changed (%s) by another client (a cohort lead or worker older than this one, or someone with the run of the JetStream API): what it held may have been dropped; it is put back", name, why))
	return s.js.Stream(ctx, name)
}

// shapeChanged says how got keeps fewer messages than want, or "".
func shapeChanged(got, want jetstream.StreamConfig) string {
	var why []string
	if got.MaxMsgsPerSubject > 0 {
		why = append(why, fmt.Sprintf("it keeps at most %d messages per subject", got.MaxMsgsPerSubject))
	}
	if got.MaxMsgs > 0 {
		why = append(why, fmt.Sprintf("at most %d messages", got.MaxMsgs))
	}
	if got.MaxBytes > 0 {
		why = append(why, fmt.Sprintf("at most %d bytes", got.MaxBytes))
	}
	if got.MaxAge > 0 && got.MaxAge < want.MaxAge {
		why = append(why, fmt.Sprintf("messages for %s, not %s", got.MaxAge, want.MaxAge))
	}
	if !slices.Equal(got.Subjects, want.Subjects) {
		why = append(why, fmt.Sprintf("subjects %q, not %q", got.Subjects, want.Subjects))
	}
	return strings.Join(why, ", ")
}
