package bridge

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/mailbox"

	"github.com/nats-io/nats.go"
)

// Replies of the receiving session.
const (
	replyOK      = "ok"
	replyRefused = "refused: "
)

// ErrRefused: the receiving session did not take the message; the error
// says why.
var ErrRefused = errors.New("refused by the receiving session")

// personSigned is what the person's signature (HeaderPerson) covers: the
// subject, the receiving Bridge's incarnation and the body.
func personSigned(subject, incarnation string, body []byte) []byte {
	return append([]byte(personContext+subject+"\x00"+incarnation+"\x00"), body...)
}

// own reports whether a checked message is the person's own: its
// HeaderPerson signature verifies with this session's own key (the key
// of this home, which no registry entry can change) over this Bridge's
// incarnation, its timestamp is within Config.OwnWindow of now, and its
// id was not taken as own before (a captured message sent again is
// held, not obeyed twice: to this Bridge by the ids it took, to a Bridge
// of the same session opened later by the incarnation, which is new).
func (b *Bridge) own(msg *nats.Msg, m mailbox.Message) bool {
	sig, err := base64.StdEncoding.DecodeString(msg.Header.Get(HeaderPerson))
	if err != nil || len(sig) != ed25519.SignatureSize ||
		!ed25519.Verify(b.cfg.Key.Public().(ed25519.PublicKey), personSigned(msg.Subject, b.self.Incarnation, msg.Data), sig) {
		return false
	}
	now, w := b.cfg.Now(), b.cfg.OwnWindow
	if d := now.Sub(m.Timestamp); d > w || d < -w {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.owns == nil {
		b.owns = map[string]time.Time{}
	}
	for id, ts := range b.owns {
		if d := now.Sub(ts); d > w || d < -w {
			delete(b.owns, id)
		}
	}
	if _, seen := b.owns[m.ID]; seen {
		return false
	}
	b.owns[m.ID] = m.Timestamp
	return true
}

// signed is what a signature covers.
func signed(subject string, body []byte) []byte {
	return append([]byte(signContext+subject+"\x00"), body...)
}

// Send delivers m to the session to names (Resolve), signed by this one,
// and returns that session and the message as sent (its id assigned). It
// returns once the receiving session took the message (held it for its
// person); a refusal wraps ErrRefused.
func (b *Bridge) Send(ctx context.Context, to string, m mailbox.Message) (Session, mailbox.Message, error) {
	target, err := b.Resolve(ctx, to)
	if err != nil {
		return Session{}, m, err
	}
	m.From, m.To = "session "+b.self.Label(), target.ID
	if m.ID == "" {
		m.ID = mailbox.NewID(b.cfg.Now())
	}
	if m.Timestamp.IsZero() {
		m.Timestamp = b.cfg.Now()
	}
	m.Timestamp = m.Timestamp.UTC().Truncate(time.Millisecond)
	if err := m.Validate(); err != nil {
		return target, m, err
	}
	body, err := m.MarshalJSON()
	if err != nil {
		return target, m, err
	}
	subject := Subject(b.cfg.Prefix, target.ID)
	msg := nats.NewMsg(subject)
	msg.Data = body
	msg.Header.Set(HeaderSession, b.self.ID)
	msg.Header.Set(HeaderSignature, base64Sig(b.cfg.Key, subject, body))
	if b.cfg.PersonStarted {
		msg.Header.Set(HeaderPerson, base64.StdEncoding.EncodeToString(ed25519.Sign(b.cfg.Key, personSigned(subject, target.Incarnation, body))))
	}
	reply, err := b.cfg.Conn.RequestMsgWithContext(ctx, msg)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return target, m, fmt.Errorf("session %s is listed but not listening (it may have just exited)", target.Label())
	case err != nil:
		return target, m, fmt.Errorf("bridge to %s: %w", target.Label(), err)
	case string(reply.Data) == replyOK:
		return target, m, nil
	}
	return target, m, fmt.Errorf("session %s: %w: %s", target.Label(), ErrRefused, strings.TrimPrefix(string(reply.Data), replyRefused))
}

// take runs for every request on this session's inbox: it checks the
// message and hands it to Config.Receive, or refuses and reports it.
func (b *Bridge) take(msg *nats.Msg) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	m, err := b.check(ctx, msg)
	if err == nil {
		err = b.cfg.Receive(ctx, m, b.own(msg, m))
	} else {
		b.cfg.OnProblem(msg.Subject, err)
	}
	reply := replyOK
	if err != nil {
		reply = replyRefused + err.Error()
	}
	if msg.Reply != "" {
		_ = msg.Respond([]byte(reply))
	}
}

// check verifies msg's signature against its sender's registry entry and
// parses it. From is set to the sender's registry label, so a message
// cannot name another sender than the key that signed it.
func (b *Bridge) check(ctx context.Context, msg *nats.Msg) (mailbox.Message, error) {
	from := msg.Header.Get(HeaderSession)
	sig, err := base64.StdEncoding.DecodeString(msg.Header.Get(HeaderSignature))
	if from == "" || err != nil || len(sig) != ed25519.SignatureSize {
		return mailbox.Message{}, errors.New("the message is not signed by a session (missing or malformed Cohort-Session/Cohort-Signature)")
	}
	sender, err := b.lookup(ctx, from)
	if err != nil {
		return mailbox.Message{}, fmt.Errorf("the sending session %q is not in the registry %s: %v", from, Bucket(b.cfg.Prefix), err)
	}
	pub, err := base64.StdEncoding.DecodeString(sender.PublicKey)
	if err != nil || len(pub) != ed25519.PublicKeySize {
		return mailbox.Message{}, fmt.Errorf("the sending session %s has no usable public key in the registry", sender.Label())
	}
	if !ed25519.Verify(pub, signed(msg.Subject, msg.Data), sig) {
		return mailbox.Message{}, fmt.Errorf("the signature does not match session %s's key", sender.Label())
	}
	var m mailbox.Message
	if err := m.UnmarshalJSON(msg.Data); err != nil {
		return mailbox.Message{}, fmt.Errorf("the message from %s does not parse: %v", sender.Label(), err)
	}
	if err := m.Validate(); err != nil {
		return mailbox.Message{}, fmt.Errorf("the message from %s is not valid: %v", sender.Label(), err)
	}
	if m.To != b.self.ID {
		return mailbox.Message{}, fmt.Errorf("the message from %s is addressed to %q, not this session", sender.Label(), m.To)
	}
	m.From = "session " + sender.Label()
	return m, nil
}

func base64Sig(key ed25519.PrivateKey, subject string, body []byte) string {
	return base64.StdEncoding.EncodeToString(ed25519.Sign(key, signed(subject, body)))
}
