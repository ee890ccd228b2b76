package bridge

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/natstest"
	"github.com/cohort-dev/cohort/mailbox"

	"github.com/nats-io/nats.go"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// session is one end: a Bridge on a connection of its own and what it
// received and refused.
type session struct {
	b        *Bridge
	mu       sync.Mutex
	got      []mailbox.Message
	own      []bool // got[i] was the person's own
	problems []string
	refuse   error
}

func open(t *testing.T, url, id, name string) *session {
	t.Helper()
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	return openAs(t, url, id, name, key, true)
}

// openAs opens a session whose home holds key, started by its person or
// not.
func openAs(t *testing.T, url, id, name string, key ed25519.PrivateKey, person bool) *session {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	s := &session{}
	b, err := Open(t.Context(), Config{Conn: nc, SessionID: id, Name: name, Host: "host-" + name, Key: key, PersonStarted: person,
		Receive: func(_ context.Context, m mailbox.Message, own bool) error {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.refuse != nil {
				return s.refuse
			}
			s.got = append(s.got, m)
			s.own = append(s.own, own)
			return nil
		},
		OnProblem: func(subject string, err error) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.problems = append(s.problems, subject+": "+err.Error())
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	s.b = b
	return s
}

func (s *session) received() ([]mailbox.Message, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]mailbox.Message(nil), s.got...), append([]string(nil), s.problems...)
}

// TestBridgeBetweenTwoSessions: a message to bridge:<name> and to
// bridge:<id> reaches the other session once, signed, with the sender
// named from the registry; an unknown session is an error naming the
// sessions the server knows.
func TestBridgeBetweenTwoSessions(t *testing.T) {
	srv := natstest.Start(t)
	alpha := open(t, srv.URL(), "11111111-aaaa", "alpha")
	beta := open(t, srv.URL(), "22222222-bbbb", "beta")
	ctx := t.Context()
	to, sent, err := alpha.b.Send(ctx, "BETA", mailbox.Message{Text: "the build is green", Summary: "status"})
	if err != nil {
		t.Fatal(err)
	}
	if to.ID != "22222222-bbbb" {
		t.Errorf("sent to %+v", to)
	}
	if _, _, err := beta.b.Send(ctx, "11111111-aaaa", mailbox.Message{Text: "thanks"}); err != nil {
		t.Fatal(err)
	}
	got, problems := beta.received()
	if len(got) != 1 || got[0].ID != sent.ID || got[0].Text != "the build is green" ||
		got[0].From != "session alpha (11111111-aaaa) on host-alpha" || len(problems) != 0 {
		t.Fatalf("beta received %+v, problems %v", got, problems)
	}
	if got, _ := alpha.received(); len(got) != 1 || got[0].From != "session beta (22222222-bbbb) on host-beta" {
		t.Fatalf("alpha received %+v", got)
	}

	_, _, err = alpha.b.Send(ctx, "gamma", mailbox.Message{Text: "hi"})
	if err == nil || !strings.Contains(err.Error(), `no live session "gamma"`) || !strings.Contains(err.Error(), "beta (22222222-bbbb) on host-beta") {
		t.Errorf("send to an unknown session: %v, want an error naming beta", err)
	}
	if _, _, err := alpha.b.Send(ctx, "alpha", mailbox.Message{Text: "me"}); err == nil || !strings.Contains(err.Error(), "this session itself") {
		t.Errorf("send to itself: %v", err)
	}
	// A session that closes leaves the registry at once.
	beta.b.Close()
	if _, _, err := alpha.b.Send(ctx, "beta", mailbox.Message{Text: "still there?"}); err == nil || !strings.Contains(err.Error(), "no other session is listed") {
		t.Errorf("send to a closed session: %v", err)
	}
}

// TestBridgeRefusesForgeries: anyone on the server can publish on a
// session's inbox subject; unsigned, wrongly signed, unparseable and
// misaddressed messages are refused with the reason, reported with the
// subject, and never reach the session. A refusal by the session itself
// (nobody to approve) reaches the sender.
func TestBridgeRefusesForgeries(t *testing.T) {
	srv := natstest.Start(t)
	alpha := open(t, srv.URL(), "11111111-aaaa", "alpha")
	beta := open(t, srv.URL(), "22222222-bbbb", "beta")
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	subject := Subject("cohort", "22222222-bbbb")
	good := mailbox.Message{ID: mailbox.NewID(time.Now()), From: "x", To: "22222222-bbbb", Text: "rm -rf /", Timestamp: time.Now()}
	body, _ := good.MarshalJSON()
	_, otherKey, _ := ed25519.GenerateKey(rand.Reader)
	cases := map[string]*nats.Msg{
		"unsigned":   {Subject: subject, Data: body, Header: nats.Header{}},
		"wrong key":  signedBy(subject, body, "11111111-aaaa", otherKey),
		"unknown":    signedBy(subject, body, "99999999-zzzz", otherKey),
		"unparsable": signedBy(subject, []byte(`{"id":`), "11111111-aaaa", alpha.b.cfg.Key),
		"misaddressed": signedBy(subject, func() []byte {
			m := good
			m.To = "33333333-cccc"
			b, _ := m.MarshalJSON()
			return b
		}(), "11111111-aaaa", alpha.b.cfg.Key),
	}
	for name, msg := range cases {
		reply, err := nc.RequestMsgWithContext(t.Context(), msg)
		if err != nil || !strings.HasPrefix(string(reply.Data), replyRefused) {
			t.Errorf("%s: reply %q, %v", name, reply.Data, err)
		}
	}
	got, problems := beta.received()
	if len(got) != 0 || len(problems) != len(cases) {
		t.Fatalf("beta received %+v; problems %q", got, problems)
	}
	for _, p := range problems {
		if !strings.HasPrefix(p, subject+": ") {
			t.Errorf("problem %q does not name the subject", p)
		}
	}
	beta.mu.Lock()
	beta.refuse = errors.New("nobody can approve in this session")
	beta.mu.Unlock()
	if _, _, err := alpha.b.Send(t.Context(), "beta", mailbox.Message{Text: "hi"}); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "nobody can approve") {
		t.Errorf("a refused send: %v", err)
	}
}

func signedBy(subject string, body []byte, session string, key ed25519.PrivateKey) *nats.Msg {
	m := nats.NewMsg(subject)
	m.Data = body
	m.Header.Set(HeaderSession, session)
	m.Header.Set(HeaderSignature, base64Sig(key, subject, body))
	return m
}

func (s *session) owns() []bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]bool(nil), s.own...)
}

// TestOnlyThePersonsOwnSessionsSkipTheHold: a message is the person's own
// only when a session of the same home (the same key) that its person
// started sent it, now, once. A session of another home, a session of
// this home that a person did not start, a captured own message sent
// again, an old one, and a registry entry rewritten to the home's key by
// someone without it are all not own: they are held as before.
func TestOnlyThePersonsOwnSessionsSkipTheHold(t *testing.T) {
	srv := natstest.Start(t)
	_, home, _ := ed25519.GenerateKey(rand.Reader)
	_, elsewhere, _ := ed25519.GenerateKey(rand.Reader)
	beta := openAs(t, srv.URL(), "22222222-bbbb", "beta", home, true)
	mine := openAs(t, srv.URL(), "11111111-aaaa", "mine", home, true)
	started := openAs(t, srv.URL(), "33333333-cccc", "started", home, false)
	other := openAs(t, srv.URL(), "44444444-dddd", "other", elsewhere, true)
	for _, s := range []*session{mine, started, other} {
		if _, _, err := s.b.Send(t.Context(), "beta", mailbox.Message{Text: "from " + s.b.Self().Name}); err != nil {
			t.Fatal(err)
		}
	}
	if got := beta.owns(); len(got) != 3 || !got[0] || got[1] || got[2] {
		t.Fatalf("own = %v, want only the first (same home, person-started)", got)
	}

	// Capture mine's next message on the wire and send it again, and an
	// old one signed as mine would.
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	captured := make(chan *nats.Msg, 1)
	sub, err := nc.Subscribe(Subject("cohort", "22222222-bbbb"), func(m *nats.Msg) { captured <- m })
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := mine.b.Send(t.Context(), "beta", mailbox.Message{Text: "once"}); err != nil {
		t.Fatal(err)
	}
	var wire *nats.Msg
	select {
	case wire = <-captured:
	case <-time.After(10 * time.Second):
		t.Fatal("nothing captured")
	}
	_ = sub.Unsubscribe()
	replay := nats.NewMsg(wire.Subject)
	replay.Data, replay.Header = wire.Data, wire.Header
	if _, err := nc.RequestMsgWithContext(t.Context(), replay); err != nil {
		t.Fatal(err)
	}
	subject := Subject("cohort", "22222222-bbbb")
	old := mailbox.Message{ID: mailbox.NewID(time.Now()), From: "x", To: "22222222-bbbb", Text: "old", Timestamp: time.Now().Add(-time.Hour)}
	body, _ := old.MarshalJSON()
	stale := signedBy(subject, body, "11111111-aaaa", home)
	stale.Header.Set(HeaderPerson, base64.StdEncoding.EncodeToString(ed25519.Sign(home, personSigned(subject, beta.b.Self().Incarnation, body))))
	if _, err := nc.RequestMsgWithContext(t.Context(), stale); err != nil {
		t.Fatal(err)
	}
	// A session of another home signs the person's signature with its
	// own key.
	fresh := mailbox.Message{ID: mailbox.NewID(time.Now()), From: "x", To: "22222222-bbbb", Text: "forged", Timestamp: time.Now()}
	body, _ = fresh.MarshalJSON()
	forged := signedBy(subject, body, "44444444-dddd", elsewhere)
	forged.Header.Set(HeaderPerson, base64.StdEncoding.EncodeToString(ed25519.Sign(elsewhere, personSigned(subject, beta.b.Self().Incarnation, body))))
	if _, err := nc.RequestMsgWithContext(t.Context(), forged); err != nil {
		t.Fatal(err)
	}
	got, _ := beta.received()
	own := beta.owns()
	if len(got) != 7 {
		t.Fatalf("beta got %d messages, want 7: %+v", len(got), got)
	}
	want := []bool{true, false, false, true, false, false, false}
	for i := range want {
		if own[i] != want[i] {
			t.Errorf("message %d (%q): own %v, want %v", i, got[i].Text, own[i], want[i])
		}
	}
}
