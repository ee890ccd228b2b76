package bridge

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/mailbox"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Headers of a bridged message.
const (
	HeaderSession   = "Cohort-Session"
	HeaderSignature = "Cohort-Signature"
	// HeaderPerson is the sending session's second signature, made only by
	// a session its person started (Config.PersonStarted).
	HeaderPerson  = "Cohort-Person"
	signContext   = "cohort bridge v1\x00"
	personContext = "cohort bridge person v2\x00"
)

// Config configures a Bridge. Conn, SessionID, Key and Receive are
// required.
type Config struct {
	Conn      *nats.Conn
	Prefix    string // subject prefix (default "cohort")
	SessionID string
	Name      string // the session's name, if it has one
	Host      string
	Key       ed25519.PrivateKey
	// Receive takes a checked message from another session; its error is
	// the sender's answer. m.From is "session NAME (ID) on HOST". own
	// reports that the message is the person's own (PersonStarted, in the
	// package doc): a session of this home that its person started sent
	// it, just now, once.
	Receive func(ctx context.Context, m mailbox.Message, own bool) error
	// PersonStarted says a person started this session (no session is
	// among its process's ancestors, and it is not a remote job's): its
	// messages then carry the home key's second signature (HeaderPerson),
	// by which the sessions of the same home take them as the person's.
	PersonStarted bool
	// OwnWindow is how far a message's timestamp may be from now for it
	// to count as the person's own (default 2 min); an older one, or an id
	// seen before, is held as any other.
	OwnWindow time.Duration
	// TTL is how long a registry entry lives unrenewed (default 30 s).
	TTL time.Duration
	// OnProblem hears of every refused message (default: a warning on
	// Logger).
	OnProblem func(subject string, err error)
	Logger    *slog.Logger
	Now       func() time.Time
}

// Session is a live session as the registry lists it.
type Session struct {
	ID        string    `json:"id"`
	Name      string    `json:"name,omitempty"`
	Host      string    `json:"host,omitempty"`
	PublicKey string    `json:"publicKey"`
	StartedAt time.Time `json:"startedAt"`
	// Incarnation is random, new each time the session's Bridge opens
	// (a resume of the same id gets a new one): the person's signature
	// covers the receiver's, so a captured message is the person's own
	// only to the Bridge it was sent to.
	Incarnation string `json:"incarnation,omitempty"`
}

// Label names s for people: its name and id, and its host.
func (s Session) Label() string {
	l := s.ID
	if s.Name != "" {
		l = fmt.Sprintf("%s (%s)", s.Name, s.ID)
	}
	if s.Host != "" {
		l += " on " + s.Host
	}
	return l
}

// Bridge is one session's end of the bridge. Safe for concurrent use.
type Bridge struct {
	cfg  Config
	reg  jetstream.KeyValue
	sub  *nats.Subscription
	self Session
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu   sync.Mutex
	owns map[string]time.Time // ids of own messages taken, with their timestamps
}

func (c *Config) defaults() error {
	switch {
	case c.Conn == nil:
		return errors.New("bridge: Config.Conn is nil")
	case c.SessionID == "" || strings.ContainsAny(c.SessionID, ". *>"):
		return fmt.Errorf("bridge: session id %q cannot be a subject token", c.SessionID)
	case len(c.Key) != ed25519.PrivateKeySize:
		return errors.New("bridge: Config.Key is not an ed25519 private key")
	case c.Receive == nil:
		return errors.New("bridge: Config.Receive is nil")
	}
	if c.Prefix == "" {
		c.Prefix = "cohort"
	}
	if c.TTL <= 0 {
		c.TTL = 30 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.OnProblem == nil {
		log := c.Logger
		c.OnProblem = func(subject string, err error) { log.Warn("bridge: refused a message", "subject", subject, "err", err) }
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.OwnWindow <= 0 {
		c.OwnWindow = 2 * time.Minute
	}
	return nil
}

// Subject is the inbox subject of session id under prefix.
func Subject(prefix, id string) string { return prefix + ".session." + id + ".inbox" }

// Bucket names the session registry under prefix.
func Bucket(prefix string) string {
	return strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(prefix)) + "_SESSIONS"
}

// Open lists the session in the registry and subscribes to its inbox.
func Open(ctx context.Context, cfg Config) (*Bridge, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	js, err := jetstream.New(cfg.Conn)
	if err != nil {
		return nil, fmt.Errorf("bridge: %w", err)
	}
	reg, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: Bucket(cfg.Prefix), TTL: cfg.TTL,
		Description: "cohort sessions reachable at bridge: addresses"})
	if err != nil {
		return nil, fmt.Errorf("bridge: registry %s: %w (is JetStream enabled on the server?)", Bucket(cfg.Prefix), err)
	}
	b := &Bridge{cfg: cfg, reg: reg, self: Session{ID: cfg.SessionID, Name: cfg.Name, Host: cfg.Host,
		PublicKey: base64.StdEncoding.EncodeToString(cfg.Key.Public().(ed25519.PublicKey)), StartedAt: cfg.Now().UTC(),
		Incarnation: rand.Text()}}
	if b.sub, err = cfg.Conn.Subscribe(Subject(cfg.Prefix, cfg.SessionID), b.take); err != nil {
		return nil, fmt.Errorf("bridge: subscribe: %w", err)
	}
	if err := b.register(ctx); err != nil {
		_ = b.sub.Unsubscribe()
		return nil, err
	}
	rctx, stop := context.WithCancel(context.Background())
	b.stop = stop
	b.wg.Go(func() { b.renew(rctx) })
	return b, nil
}

func (b *Bridge) register(ctx context.Context) error {
	data, _ := json.Marshal(b.self)
	if _, err := b.reg.Put(ctx, b.self.ID, data); err != nil {
		return fmt.Errorf("bridge: registry %s: %w", Bucket(b.cfg.Prefix), err)
	}
	return nil
}

// renew keeps the registry entry alive at a third of the TTL.
func (b *Bridge) renew(ctx context.Context) {
	tick := time.NewTicker(b.cfg.TTL / 3)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		rctx, cancel := context.WithTimeout(ctx, b.cfg.TTL/3)
		if err := b.register(rctx); err != nil && ctx.Err() == nil {
			b.cfg.Logger.Warn("bridge: renewing the registry entry", "err", err)
		}
		cancel()
	}
}

// Self is this session's registry entry.
func (b *Bridge) Self() Session { return b.self }

// Close leaves the registry and stops taking messages.
func (b *Bridge) Close() {
	b.stop()
	b.wg.Wait()
	_ = b.sub.Drain()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = b.reg.Delete(ctx, b.self.ID)
}

// Sessions lists the live sessions, this one included, by name then id.
func (b *Bridge) Sessions(ctx context.Context) ([]Session, error) {
	lister, err := b.reg.ListKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("bridge: registry: %w", err)
	}
	var out []Session
	for key := range lister.Keys() {
		if s, err := b.lookup(ctx, key); err == nil {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(x, y Session) int { return strings.Compare(x.Name+"\x00"+x.ID, y.Name+"\x00"+y.ID) })
	return out, nil
}

func (b *Bridge) lookup(ctx context.Context, id string) (Session, error) {
	e, err := b.reg.Get(ctx, id)
	if err != nil {
		return Session{}, err
	}
	var s Session
	if err := json.Unmarshal(e.Value(), &s); err != nil || s.ID != id {
		return Session{}, fmt.Errorf("registry entry %s does not parse (%v)", id, err)
	}
	return s, nil
}

// Resolve finds the live session to names (an id exactly, a name in any
// case). An unknown one is an error naming the sessions the registry
// knows.
func (b *Bridge) Resolve(ctx context.Context, to string) (Session, error) {
	all, err := b.Sessions(ctx)
	if err != nil {
		return Session{}, err
	}
	var hits, others []Session
	for _, s := range all {
		switch {
		case s.ID == b.self.ID:
		case s.ID == to || (s.Name != "" && strings.EqualFold(s.Name, to)):
			hits = append(hits, s)
		default:
			others = append(others, s)
		}
	}
	switch {
	case len(hits) == 1:
		return hits[0], nil
	case len(hits) > 1:
		return Session{}, fmt.Errorf("%q names %d live sessions: %s; send to one by its id", to, len(hits), labels(hits))
	case to == b.self.ID || strings.EqualFold(to, b.self.Name) && b.self.Name != "":
		return Session{}, fmt.Errorf("bridge:%s is this session itself", to)
	case len(others) == 0:
		return Session{}, fmt.Errorf("no live session %q on the NATS server: no other session is listed there now", to)
	}
	return Session{}, fmt.Errorf("no live session %q on the NATS server; the sessions it knows are: %s", to, labels(others))
}

func labels(ss []Session) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		parts[i] = s.Label()
	}
	return strings.Join(parts, ", ")
}
