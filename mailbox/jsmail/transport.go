package jsmail

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cohort-dev/cohort/mailbox"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Config configures a Transport. Conn, Team and Keys are required.
type Config struct {
	// Conn is the NATS connection; the caller owns it and closes it after
	// the Transport's inboxes.
	Conn *nats.Conn
	// Team names the team: its inboxes are on
	// PREFIX.team.TEAM.inbox.AGENT.
	Team string
	// Prefix starts every subject (default "cohort", as package remote's).
	Prefix string
	// Keys signs what this process sends and checks what it receives.
	Keys *Keys
	// Lead is the member whose key alone may send protocol answers
	// (default "team-lead").
	Lead string
	// PullExpiry is how long an inbox's pull request lasts (default 10 s);
	// its heartbeats come at half that, and two missed ones (a server of
	// the cluster died) make the inbox's consumer anew.
	PullExpiry time.Duration
	// Replicas is the stream's and buckets' replica count (default 1).
	Replicas int
	// Now is the clock for timestamps and ids (default time.Now).
	Now func() time.Time
	// NewID returns a fresh message id (default mailbox.NewID(Now())).
	NewID func() string
	// MaxMessageBytes bounds one encoded message (default 1 MiB, NATS's
	// default max_payload).
	MaxMessageBytes int
	// DuplicateWindow is how long the server drops a re-sent message id
	// (default 2 min).
	DuplicateWindow time.Duration
	// DedupeWindow is how many acknowledged ids an Inbox remembers to drop
	// a sender's re-send that arrives after the server's window (default
	// 1024). Replays are not its business: see FreshWindow.
	DedupeWindow int
	// FreshWindow is how far apart a message's signed send time and the
	// time the server stored it may be (default 5/12 of DuplicateWindow: 50 s); it must be under
	// half of DuplicateWindow, so that any re-publish of a message that
	// passes it falls inside the server's duplicate window (package doc,
	// "Replays"). It also bounds the machines' clock skew.
	FreshWindow time.Duration
	// StateDir is a directory on this machine where each Inbox keeps the
	// ids its owner acknowledged (AGENT.seen), so that a replayed message
	// is refused after any restart whatever the server forgot (package
	// doc, "Replays"). Required to open an inbox (a Transport that only
	// sends needs none); package team uses the team's keys directory.
	StateDir string
	// MaxAge is how long the stream keeps a message (default 30 days):
	// the bound on a member's absence. A message its owner has not taken
	// within MaxAge of its storing is dropped by the server, unread
	// (package doc, "Reading by the owner's cursor").
	MaxAge time.Duration
	// CheckInterval is how often an open Inbox asks the server whether
	// the stream is still as it made it, and reads whatever a lost wake-up
	// left (default 5 s).
	CheckInterval time.Duration
	// LeaseTTL is how long an inbox stays taken after its consumer's
	// process dies without closing it (default 15 s; renewed at a third).
	LeaseTTL time.Duration
	// OnProblem receives reports of refused and dead-lettered messages.
	// Default: log at warning level.
	OnProblem func(mailbox.Problem)
	// Logger receives diagnostics (default slog.Default()).
	Logger *slog.Logger
}

// Transport is a team's mailboxes on NATS JetStream. It implements
// mailbox.Transport and is safe for concurrent use.
type Transport struct {
	cfg     Config
	js      jetstream.JetStream
	stream  jetstream.Stream
	members jetstream.KeyValue // registered inboxes
	leases  jetstream.KeyValue // live consumers, with TTL
	cursors jetstream.KeyValue // the owners' cursors, for Pending
	names   names

	mu         sync.Mutex
	registered map[string]bool

	// testHookRestore, when set (tests), runs before an open inbox makes
	// the stream anew: a test holds it to change the stream unraced.
	testHookRestore atomic.Pointer[func()]
}

var _ mailbox.Transport = (*Transport)(nil)

// names are one team's subjects, stream and buckets.
type names struct {
	inbox, dead, stored               string // subject prefixes; an agent's name follows a dot
	stream, members, leasesB, cursors string
}

func namesFor(prefix, team string) names {
	up := strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(prefix))
	base := prefix + ".team." + team
	return names{
		inbox: base + ".inbox", dead: base + ".dead", stored: base + ".stored",
		stream: up + "_TEAM_" + team, members: up + "_TEAM_" + team + "_INBOXES", leasesB: up + "_TEAM_" + team + "_READERS",
		cursors: up + "_TEAM_" + team + "_CURSORS",
	}
}

// Subject is the subject of agent's inbox in team.
func Subject(prefix, team, agent string) string { return namesFor(prefix, team).inbox + "." + agent }

func (c *Config) defaults() error {
	if c.Conn == nil {
		return errors.New("jsmail: Config.Conn is nil")
	}
	if err := mailbox.ValidateName(c.Team); err != nil {
		return fmt.Errorf("jsmail: team: %w", err)
	}
	if c.Keys == nil {
		return errors.New("jsmail: Config.Keys is nil: every message on a team subject is signed")
	}
	if c.Prefix == "" {
		c.Prefix = "cohort"
	}
	if c.Lead == "" {
		c.Lead = "team-lead"
	}
	if c.Replicas <= 0 {
		c.Replicas = 1
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.PullExpiry <= 0 {
		c.PullExpiry = 10 * time.Second
	}
	if c.NewID == nil {
		now := c.Now
		c.NewID = func() string { return mailbox.NewID(now()) }
	}
	if c.MaxMessageBytes <= 0 {
		c.MaxMessageBytes = 1 << 20
	}
	if c.DuplicateWindow <= 0 {
		c.DuplicateWindow = 2 * time.Minute
	}
	if c.DedupeWindow <= 0 {
		c.DedupeWindow = 1024
	}
	if c.FreshWindow <= 0 {
		c.FreshWindow = c.DuplicateWindow * 5 / 12 // 50 s of 2 min
	}
	if 2*c.FreshWindow >= c.DuplicateWindow {
		return fmt.Errorf("jsmail: Config.FreshWindow %s must be under half of DuplicateWindow %s: a replay accepted as fresh could fall outside the server's duplicate check", c.FreshWindow, c.DuplicateWindow)
	}
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = 15 * time.Second
	}
	if c.MaxAge <= 0 {
		c.MaxAge = 30 * 24 * time.Hour
	}
	if c.MaxAge <= c.DuplicateWindow {
		return fmt.Errorf("jsmail: Config.MaxAge %s must be over DuplicateWindow %s", c.MaxAge, c.DuplicateWindow)
	}
	if c.CheckInterval <= 0 {
		c.CheckInterval = 5 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.OnProblem == nil {
		log := c.Logger
		c.OnProblem = func(p mailbox.Problem) { log.Warn("mailbox: " + p.String()) }
	}
	return nil
}

// Open makes (or updates to the same shape) the team's stream and buckets
// and returns its Transport.
func Open(ctx context.Context, cfg Config) (*Transport, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	js, err := jetstream.New(cfg.Conn)
	if err != nil {
		return nil, fmt.Errorf("jsmail: %w", err)
	}
	n := namesFor(cfg.Prefix, cfg.Team)
	t := &Transport{cfg: cfg, js: js, names: n, registered: map[string]bool{}}
	if err := t.migrate(ctx); err != nil {
		return nil, err
	}
	t.stream, err = js.CreateOrUpdateStream(ctx, t.streamConfig())
	if err != nil {
		return nil, fmt.Errorf("jsmail: team %s: stream %s: %w", cfg.Team, n.stream, err)
	}
	if t.members, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: n.members, Replicas: cfg.Replicas, Storage: jetstream.FileStorage,
	}); err != nil {
		return nil, fmt.Errorf("jsmail: team %s: bucket %s: %w", cfg.Team, n.members, err)
	}
	if t.leases, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: n.leasesB, Replicas: cfg.Replicas, Storage: jetstream.FileStorage, TTL: cfg.LeaseTTL,
	}); err != nil {
		return nil, fmt.Errorf("jsmail: team %s: bucket %s: %w", cfg.Team, n.leasesB, err)
	}
	if t.cursors, err = js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket: n.cursors, Replicas: cfg.Replicas, Storage: jetstream.FileStorage,
	}); err != nil {
		return nil, fmt.Errorf("jsmail: team %s: bucket %s: %w", cfg.Team, n.cursors, err)
	}
	return t, nil
}

func (t *Transport) streamConfig() jetstream.StreamConfig {
	n := t.names
	return jetstream.StreamConfig{
		Name: n.stream, Subjects: []string{n.inbox + ".*", n.dead + ".*"},
		Retention: jetstream.LimitsPolicy, MaxAge: t.cfg.MaxAge, DenyDelete: true, DenyPurge: true,
		Storage: jetstream.FileStorage, Replicas: t.cfg.Replicas,
		Duplicates: t.cfg.DuplicateWindow, MaxMsgSize: int32(t.cfg.MaxMessageBytes + 4096),
		AllowDirect: true, // an inbox reads a batch in one request (batch.go)
		// An inbox's wake-up: the headers of each message once stored,
		// with its sequence, on P.team.T.stored.A.
		RePublish:   &jetstream.RePublish{Source: n.inbox + ".*", Destination: n.stored + ".{{wildcard(1)}}", HeadersOnly: true},
		Description: "cohort team " + t.cfg.Team + ": inboxes and dead letters",
	}
}

// migrate replaces the work-queue stream of an earlier version (a
// retention the server does not change): made anew if no inbox holds a
// message, refused with what to do if one does.
func (t *Transport) migrate(ctx context.Context) error {
	s, err := t.js.Stream(ctx, t.names.stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("jsmail: team %s: stream %s: %w", t.cfg.Team, t.names.stream, err)
	}
	if s.CachedInfo().Config.Retention != jetstream.WorkQueuePolicy {
		return nil
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(t.names.inbox+".*"))
	if err != nil {
		return fmt.Errorf("jsmail: team %s: stream %s: %w", t.cfg.Team, t.names.stream, err)
	}
	waiting := 0
	for _, n := range info.State.Subjects {
		waiting += int(n)
	}
	if waiting > 0 {
		return fmt.Errorf("jsmail: team %s: stream %s is a work queue made by an earlier version of cohort and holds %d messages not yet read: let the team's members read them with that version, or delete the stream (nats stream rm %s) and lose them; this version then makes it anew",
			t.cfg.Team, t.names.stream, waiting, t.names.stream)
	}
	if err := t.js.DeleteStream(ctx, t.names.stream); err != nil && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return fmt.Errorf("jsmail: team %s: replacing the earlier version's stream %s: %w", t.cfg.Team, t.names.stream, err)
	}
	t.cfg.OnProblem(mailbox.Problem{Path: t.names.stream, Reason: fmt.Sprintf(
		"the team's stream was a work queue made by an earlier version of cohort, with no message waiting: made anew as this version reads it (%d dead letters it kept are gone)", info.State.Msgs)})
	return nil
}

// errStreamChanged marks a stream that is not as Open makes it: an inbox
// does not read from it.
var errStreamChanged = errors.New("the team's stream was changed")

// checkStream makes sure the stream is still as Open made it (anyone who
// may use the server's API could change it): it keeps messages until
// MaxAge, refuses deleting and purging them, wakes the inboxes, and its
// duplicate window outlasts twice the freshness window (the freshness
// check rests on it: package doc, "Replays"). It returns the stream's
// creation time, which changes when someone deletes it and makes it anew.
func (t *Transport) checkStream(ctx context.Context) (time.Time, error) {
	info, err := t.stream.Info(ctx)
	if err != nil {
		return time.Time{}, fmt.Errorf("stream %s: %w", t.names.stream, err)
	}
	c, want := info.Config, t.streamConfig()
	if d := c.Duplicates; d <= 2*t.cfg.FreshWindow {
		return time.Time{}, fmt.Errorf("%w: stream %s keeps message ids for duplicates %s, not more than twice the freshness window %s: a replayed message could pass; someone changed the stream's duplicate window: open the team again (jsmail.Open sets it to %s)",
			errStreamChanged, t.names.stream, d, t.cfg.FreshWindow, t.cfg.DuplicateWindow)
	}
	if c.Retention != want.Retention || strings.Join(c.Subjects, " ") != strings.Join(want.Subjects, " ") {
		return time.Time{}, fmt.Errorf("%w: stream %s has retention %s on subjects %v, not %s on %v: someone made it anew: open the team again (jsmail.Open makes it as it must be)",
			errStreamChanged, t.names.stream, c.Retention, c.Subjects, want.Retention, want.Subjects)
	}
	if !c.DenyDelete || !c.DenyPurge {
		return time.Time{}, fmt.Errorf("%w: stream %s allows deleting (%t) or purging (%t) its messages: anyone with the team's credentials could take a member's mail; someone changed it: open the team again (jsmail.Open denies both)",
			errStreamChanged, t.names.stream, !c.DenyDelete, !c.DenyPurge)
	}
	// Limits that drop messages no one took, or keep them where a restart
	// loses them: "nothing lost" would not hold.
	if (c.MaxAge > 0 && c.MaxAge < want.MaxAge) || c.MaxMsgs > 0 || c.MaxBytes > 0 || c.MaxMsgsPerSubject > 0 || c.Storage != want.Storage || c.Replicas < want.Replicas {
		return time.Time{}, fmt.Errorf("%w: stream %s has max age %s, max messages %d, max bytes %d, max per subject %d, %s storage, %d replicas: it could drop or lose messages not yet taken; someone changed it: open the team again (jsmail.Open makes it with max age %s and no other limit, file storage, %d replicas)",
			errStreamChanged, t.names.stream, c.MaxAge, c.MaxMsgs, c.MaxBytes, c.MaxMsgsPerSubject, c.Storage, c.Replicas, want.MaxAge, want.Replicas)
	}
	// Settings that move, copy or purge stored mail (a transform stores
	// one member's mail on another's subject; a rollup header purges an
	// inbox; republishing bodies copies mail out) or stop the stream
	// taking any.
	if c.SubjectTransform != nil || !reflect.DeepEqual(c.RePublish, want.RePublish) || c.AllowRollup || c.Sealed || c.Mirror != nil || len(c.Sources) > 0 ||
		c.NoAck || c.Discard != want.Discard {
		return time.Time{}, fmt.Errorf("%w: stream %s has a subject transform, another republishing, rollups, a seal, a mirror or sources, no acks or another discard policy: mail could go to another inbox, be copied out or purged, or inboxes not be woken; someone changed it: open the team again (jsmail.Open makes it with none of these)",
			errStreamChanged, t.names.stream)
	}
	return info.Created, nil
}

// Team names the transport's team.
func (t *Transport) Team() string { return t.cfg.Team }

// Register creates agent's inbox: its entry in the team's inbox bucket.
// It is idempotent.
func (t *Transport) Register(ctx context.Context, agent string) error {
	if err := mailbox.ValidateName(agent); err != nil {
		return fmt.Errorf("mailbox register: %w", err)
	}
	if _, err := t.members.Put(ctx, agent, []byte(t.inbox(agent))); err != nil {
		return fmt.Errorf("mailbox register %s: %w", agent, err)
	}
	t.mu.Lock()
	t.registered[agent] = true
	t.mu.Unlock()
	return nil
}

func (t *Transport) inbox(agent string) string      { return t.names.inbox + "." + agent }
func (t *Transport) deadLetter(agent string) string { return t.names.dead + "." + agent }
func (t *Transport) stored(agent string) string     { return t.names.stored + "." + agent }

// isRegistered asks the team's bucket once per agent; a registration is
// never taken back while a Transport is open.
func (t *Transport) isRegistered(ctx context.Context, agent string) (bool, error) {
	t.mu.Lock()
	ok := t.registered[agent]
	t.mu.Unlock()
	if ok {
		return true, nil
	}
	_, err := t.members.Get(ctx, agent)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	t.mu.Lock()
	t.registered[agent] = true
	t.mu.Unlock()
	return true, nil
}

// Append signs m as its sender and publishes it to the inbox of m.To with
// m.ID as the message id, so the server drops a retry within its
// duplicate window. It returns once the server stored it.
func (t *Transport) Append(ctx context.Context, m mailbox.Message) (mailbox.Message, error) {
	if err := mailbox.ValidateName(m.To); err != nil {
		return mailbox.Message{}, fmt.Errorf("mailbox append: %w", err)
	}
	if m.ID == "" {
		m.ID = t.cfg.NewID()
	}
	if m.Timestamp.IsZero() {
		m.Timestamp = t.cfg.Now()
	}
	m.Timestamp = m.Timestamp.UTC().Truncate(time.Millisecond)
	if err := m.Validate(); err != nil {
		return mailbox.Message{}, fmt.Errorf("mailbox append to %s: %w", m.To, err)
	}
	body, err := m.MarshalJSON()
	if err != nil {
		return mailbox.Message{}, fmt.Errorf("mailbox append to %s: %w: %v", m.To, mailbox.ErrInvalidMessage, err)
	}
	if len(body) > t.cfg.MaxMessageBytes {
		return mailbox.Message{}, fmt.Errorf("mailbox append to %s: %w: encoded message is %d bytes, the limit is %d",
			m.To, mailbox.ErrInvalidMessage, len(body), t.cfg.MaxMessageBytes)
	}
	ok, err := t.isRegistered(ctx, m.To)
	if err != nil {
		return mailbox.Message{}, fmt.Errorf("mailbox append to %s: %w", m.To, err)
	}
	if !ok {
		return mailbox.Message{}, fmt.Errorf("mailbox append to %s: %w", m.To, mailbox.ErrUnknownRecipient)
	}
	msg := nats.NewMsg(t.inbox(m.To))
	msg.Data = body
	msg.Header.Set(jetstream.MsgIDHeader, m.ID)
	if err := t.cfg.Keys.sign(msg, m.From); err != nil {
		return mailbox.Message{}, fmt.Errorf("mailbox append to %s: %w", m.To, err)
	}
	if _, err := t.js.PublishMsg(ctx, msg); err != nil {
		return mailbox.Message{}, fmt.Errorf("mailbox append to %s: %w", m.To, err)
	}
	return m, nil
}

// Pending counts the messages stored for agent and not yet taken by its
// owner: those on its subject from the owner's cursor on (the owner
// keeps its floor in the team's cursor bucket; package doc, "Pending"),
// less those above the floor it took already.
func (t *Transport) Pending(ctx context.Context, agent string) (int, error) {
	if err := mailbox.ValidateName(agent); err != nil {
		return 0, fmt.Errorf("mailbox pending: %w", err)
	}
	ok, err := t.isRegistered(ctx, agent)
	if err != nil {
		return 0, fmt.Errorf("mailbox pending %s: %w", agent, err)
	}
	if !ok {
		return 0, fmt.Errorf("mailbox pending %s: %w", agent, mailbox.ErrUnknownRecipient)
	}
	info, err := t.stream.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("mailbox pending %s: %w", agent, err)
	}
	cur := cursorOf(ctx, t.cursors, agent, info.Created)
	c, err := t.stream.CreateConsumer(ctx, jetstream.ConsumerConfig{
		FilterSubject: t.inbox(agent), DeliverPolicy: jetstream.DeliverByStartSequencePolicy, OptStartSeq: cur.floor,
		AckPolicy: jetstream.AckNonePolicy, InactiveThreshold: 10 * time.Second, MemoryStorage: true,
	})
	if err != nil {
		return 0, fmt.Errorf("mailbox pending %s: %w", agent, err)
	}
	n := int(c.CachedInfo().NumPending) - cur.above
	_ = t.stream.DeleteConsumer(context.WithoutCancel(ctx), c.CachedInfo().Name)
	return max(n, 0), nil
}

// DeadLetters returns the number of messages dead-lettered from agent's
// inbox and kept on PREFIX.team.TEAM.dead.AGENT.
func (t *Transport) DeadLetters(ctx context.Context, agent string) (int, error) {
	subj := t.deadLetter(agent)
	info, err := t.stream.Info(ctx, jetstream.WithSubjectFilter(subj))
	if err != nil {
		return 0, fmt.Errorf("mailbox dead letters %s: %w", agent, err)
	}
	return int(info.State.Subjects[subj]), nil
}
