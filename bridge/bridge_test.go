package bridge

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
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
	problems []string
	refuse   error
}

func open(t *testing.T, url, id, name string) *session {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	s := &session{}
	b, err := Open(t.Context(), Config{Conn: nc, SessionID: id, Name: name, Host: "host-" + name, Key: key,
		Receive: func(_ context.Context, m mailbox.Message) error {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.refuse != nil {
				return s.refuse
			}
			s.got = append(s.got, m)
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
