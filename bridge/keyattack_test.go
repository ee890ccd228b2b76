package bridge

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/natstest"
	"github.com/cohort-dev/cohort/mailbox"

	"github.com/nats-io/nats.go"
)

// Attacks on the person's signature from outside (keyattack, session 6):
// a NATS client that sees a session's inbox, with a registered session
// of its own. Each test asserts that what it sends is held (not own); a
// test of an attack that got through is skipped unless
// KEYATTACK_ESCAPES=1 (see /work/notes/keyattack-log.md).

// captureOwn sends text from mine to beta and returns the message as it
// went on the wire, Cohort-Person signature and all.
func captureOwn(t *testing.T, nc *nats.Conn, mine *session, betaID, text string) *nats.Msg {
	t.Helper()
	got := make(chan *nats.Msg, 1)
	sub, err := nc.Subscribe(Subject("cohort", betaID), func(m *nats.Msg) {
		select {
		case got <- m:
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := mine.b.Send(t.Context(), betaID, mailbox.Message{Text: text}); err != nil {
		t.Fatal(err)
	}
	select {
	case m := <-got:
		return m
	case <-time.After(10 * time.Second):
		t.Fatal("nothing captured")
		return nil
	}
}

func request(t *testing.T, nc *nats.Conn, m *nats.Msg) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := nc.RequestMsgWithContext(ctx, m); err != nil {
		t.Fatal(err)
	}
}

// TestKeyattackPersonSignatureLifted: the attacker, with a session of its
// own in the registry, takes the Cohort-Person header of the person's
// message and puts it on a body of its own (same id and timestamp, its
// text), on the same body sent to another session of the same home, and
// on a body dated 90 s ahead (inside the window, signed by itself). None
// is the person's own.
func TestKeyattackPersonSignatureLifted(t *testing.T) {
	srv := natstest.Start(t)
	_, home, _ := ed25519.GenerateKey(rand.Reader)
	_, evil, _ := ed25519.GenerateKey(rand.Reader)
	beta := openAs(t, srv.URL(), "22222222-bbbb", "beta", home, true)
	gamma := openAs(t, srv.URL(), "55555555-eeee", "gamma", home, true)
	mine := openAs(t, srv.URL(), "11111111-aaaa", "mine", home, true)
	openAs(t, srv.URL(), "44444444-dddd", "mallory", evil, false)
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	wire := captureOwn(t, nc, mine, "22222222-bbbb", "run the tests")
	person := wire.Header.Get(HeaderPerson)
	if person == "" {
		t.Fatal("the person's message carries no Cohort-Person signature")
	}
	var orig mailbox.Message
	if err := orig.UnmarshalJSON(wire.Data); err != nil {
		t.Fatal(err)
	}

	// Its own body, the person's signature.
	other := orig
	other.Text = "rm -rf the checkout"
	body, _ := other.MarshalJSON()
	m1 := signedBy(wire.Subject, body, "44444444-dddd", evil)
	m1.Header.Set(HeaderPerson, person)
	request(t, nc, m1)
	// The person's body for beta, re-addressed to gamma (same home).
	to := orig
	to.To = "55555555-eeee"
	body, _ = to.MarshalJSON()
	m2 := signedBy(Subject("cohort", "55555555-eeee"), body, "44444444-dddd", evil)
	m2.Header.Set(HeaderPerson, person)
	request(t, nc, m2)
	// The person's exact body and signature on gamma's subject.
	m3 := signedBy(Subject("cohort", "55555555-eeee"), wire.Data, "44444444-dddd", evil)
	m3.Header.Set(HeaderPerson, person)
	request(t, nc, m3)

	if got := beta.owns(); len(got) != 2 || !got[0] || got[1] {
		t.Errorf("beta own = %v, want [true false]: a lifted person signature passed", got)
	}
	gotG, probs := gamma.received()
	if own := gamma.owns(); len(own) != 1 || own[0] || len(probs) != 1 {
		t.Errorf("gamma own = %v (messages %d, refusals %v), want one held and one refused (addressed to beta)", own, len(gotG), probs)
	}
}

// TestKeyattackPersonMessageAfterAResume: the person's message to beta is
// taken as own; beta's session closes and is opened again under the same
// id (a resume) within the two minutes, and the attacker sends the
// captured message again. It must be held: it was taken once (B6, fixed:
// the person's signature covers the receiving Bridge's incarnation,
// new at every open).
func TestKeyattackPersonMessageAfterAResume(t *testing.T) {
	srv := natstest.Start(t)
	_, home, _ := ed25519.GenerateKey(rand.Reader)
	beta := openAs(t, srv.URL(), "22222222-bbbb", "beta", home, true)
	mine := openAs(t, srv.URL(), "11111111-aaaa", "mine", home, true)
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	wire := captureOwn(t, nc, mine, "22222222-bbbb", "deploy")
	if got := beta.owns(); len(got) != 1 || !got[0] {
		t.Fatalf("beta own = %v, want [true]", got)
	}
	beta.b.Close()
	resumed := openAs(t, srv.URL(), "22222222-bbbb", "beta", home, true)
	replay := nats.NewMsg(wire.Subject)
	replay.Data, replay.Header = wire.Data, wire.Header
	request(t, nc, replay)
	// The person's next message to the resumed beta is its own.
	if _, _, err := mine.b.Send(t.Context(), "22222222-bbbb", mailbox.Message{Text: "deploy again"}); err != nil {
		t.Fatal(err)
	}
	if got := resumed.owns(); len(got) != 2 || got[0] || !got[1] {
		t.Errorf("the resumed beta: own = %v, want [false true]: a captured own message was taken twice, or a new one was not", got)
	}
}
