package jsmail

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/internal/clip"
	"github.com/cohort-dev/cohort/mailbox"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Headers a team message carries beside its JSON body (the file mailbox's
// line, unchanged).
const (
	HeaderKey       = "Cohort-Key"       // the signing member's name
	HeaderSignature = "Cohort-Signature" // base64 ed25519 signature
	// HeaderSent is when the sender signed the message (RFC 3339, UTC),
	// inside the signature: the receiver refuses a message the server
	// stored more than Config.FreshWindow from it (a replay).
	HeaderSent = "Cohort-Sent"
	// Dead letters keep the refused message's subject and why.
	HeaderDeadSubject = "Cohort-Dead-Subject"
	HeaderDeadReason  = "Cohort-Dead-Reason"
)

// signContext is signed with every message, so a signature made for
// anything else with the same key (a remote job) cannot pass for one.
const signContext = "cohort team message v2\n"

// Keys are a process's view of a team's keys: the private keys of the
// members it speaks for, and the public keys of every member, the lead's
// included. A member's key is named by the member's name. Safe for
// concurrent use.
type Keys struct {
	src   KeySource
	fresh bool // ask src for every message's key (NewFreshKeys)
	mu    sync.RWMutex
	own   map[string]ed25519.PrivateKey
	trust map[string]ed25519.PublicKey
}

// KeySource finds the keys Keys was not given, when first needed: a
// member's private key when this process signs as it, a member's public
// key when a message signed by it arrives. Found keys are kept; a public
// key is asked for again when a message does not verify with the one
// kept (its member may have a new one).
type KeySource interface {
	PrivateKey(member string) (ed25519.PrivateKey, error)
	PublicKey(member string) (ed25519.PublicKey, error)
}

// NewKeys returns keys that sign nothing and trust no one.
func NewKeys() *Keys { return NewKeysFrom(nil) }

// NewKeysFrom returns keys that ask src for what they lack (src may be
// nil).
func NewKeysFrom(src KeySource) *Keys {
	return &Keys{src: src, own: map[string]ed25519.PrivateKey{}, trust: map[string]ed25519.PublicKey{}}
}

// NewFreshKeys returns keys that ask src for a member's public key on
// every message, keeping none of its answers: a member's key may be
// replaced at any moment (respawned elsewhere), and a key kept here would
// stay good until the new one is first used. src answers from what it
// knows to be current. Keys given with Own or Trust are kept as usual.
func NewFreshKeys(src KeySource) *Keys {
	k := NewKeysFrom(src)
	k.fresh = true
	return k
}

// private is member's private key, if this process may sign as it (the
// error says why not).
func (k *Keys) private(member string) (ed25519.PrivateKey, error) {
	k.mu.RLock()
	key, ok := k.own[member]
	k.mu.RUnlock()
	if ok {
		return key, nil
	}
	if k.src == nil {
		return nil, errors.New("no key source")
	}
	key, err := k.src.PrivateKey(member)
	if err == nil {
		err = k.Own(member, key)
	}
	if err != nil {
		return nil, err
	}
	return key, nil
}

// public is member's public key, if the team knows it (the error says
// why not).
func (k *Keys) public(member string) (ed25519.PublicKey, error) {
	k.mu.RLock()
	pub, ok := k.trust[member]
	k.mu.RUnlock()
	if ok {
		return pub, nil
	}
	if k.fresh && k.src != nil {
		if err := mailbox.ValidateName(member); err != nil {
			return nil, err
		}
		return k.src.PublicKey(member)
	}
	return k.lookup(member)
}

// lookup asks the source for member's key, past what is kept, and keeps
// what it answers.
func (k *Keys) lookup(member string) (ed25519.PublicKey, error) {
	if k.src == nil {
		return nil, errors.New("no key source")
	}
	if err := mailbox.ValidateName(member); err != nil {
		return nil, err
	}
	pub, err := k.src.PublicKey(member)
	if err != nil {
		return nil, err
	}
	if err := k.Trust(member, pub); err != nil {
		return nil, err
	}
	return pub, nil
}

// renewed is member's key as the source has it now, when a message did
// not verify with held: a member respawned elsewhere has a new key. It
// is nil (and err says why, if anything went wrong) when the source has
// no other key, or when this process signs as member itself.
func (k *Keys) renewed(member string, held ed25519.PublicKey) (ed25519.PublicKey, error) {
	k.mu.RLock()
	_, mine := k.own[member]
	k.mu.RUnlock()
	if mine || k.src == nil || k.fresh {
		return nil, nil // fresh keys asked the source already
	}
	pub, err := k.lookup(member)
	if err != nil || pub.Equal(held) {
		return nil, err
	}
	return pub, nil
}

// Own lets this process sign as member with key (and trusts its public
// half).
func (k *Keys) Own(member string, key ed25519.PrivateKey) error {
	if err := mailbox.ValidateName(member); err != nil {
		return fmt.Errorf("jsmail: key: %w", err)
	}
	if len(key) != ed25519.PrivateKeySize {
		return fmt.Errorf("jsmail: key of %q is not an ed25519 private key", member)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.own[member] = key
	k.trust[member] = key.Public().(ed25519.PublicKey)
	return nil
}

// Trust accepts messages from member signed with pub.
func (k *Keys) Trust(member string, pub ed25519.PublicKey) error {
	if err := mailbox.ValidateName(member); err != nil {
		return fmt.Errorf("jsmail: key: %w", err)
	}
	if len(pub) != ed25519.PublicKeySize {
		return fmt.Errorf("jsmail: key of %q is not an ed25519 public key (%d bytes)", member, len(pub))
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.trust[member] = pub
	return nil
}

// sign adds from's signature over the message's subject, id
// (msg's Nats-Msg-Id header, which must be set), send time (now) and
// body.
func (k *Keys) sign(msg *nats.Msg, from string) error {
	key, err := k.private(from)
	if err != nil {
		return fmt.Errorf("this process holds no key for sender %q: it cannot sign as them: %v", clip.String(from, 64), err)
	}
	return signAt(msg, from, msg.Header.Get(jetstream.MsgIDHeader), key, time.Now())
}

// Sign signs msg as signer with key, as a Transport signs what it
// publishes: id is the message's id (set as its Nats-Msg-Id), the send
// time is now. It is for code that publishes on a team subject without
// a Transport (tools, tests).
func Sign(msg *nats.Msg, signer, id string, key ed25519.PrivateKey) error {
	if len(key) != ed25519.PrivateKeySize {
		return fmt.Errorf("jsmail: key of %q is not an ed25519 private key", signer)
	}
	return signAt(msg, signer, id, key, time.Now())
}

func signAt(msg *nats.Msg, from, id string, key ed25519.PrivateKey, sent time.Time) error {
	if id == "" || strings.ContainsAny(id, "\r\n") {
		return fmt.Errorf("the message's id %q cannot be signed (its Nats-Msg-Id header is empty or holds a line break)", clip.String(id, 64))
	}
	if msg.Header == nil {
		msg.Header = nats.Header{}
	}
	at := sent.UTC().Format(time.RFC3339Nano)
	sig := ed25519.Sign(key, signed(msg.Subject, id, at, msg.Data))
	msg.Header.Set(jetstream.MsgIDHeader, id)
	msg.Header.Set(HeaderSent, at)
	msg.Header.Set(HeaderKey, from)
	msg.Header.Set(HeaderSignature, base64.StdEncoding.EncodeToString(sig))
	return nil
}

// signed is what a signature covers: the context, the subject, the id,
// the send time and the body, each but the last ended by a newline (none
// of the first four can hold one: a subject and an id have no spaces or
// newlines, and the time is jsmail's own format).
func signed(subject, id, sent string, body []byte) []byte {
	b := make([]byte, 0, len(signContext)+len(subject)+len(id)+len(sent)+3+len(body))
	b = append(b, signContext...)
	b = append(b, subject...)
	b = append(b, '\n')
	b = append(b, id...)
	b = append(b, '\n')
	b = append(b, sent...)
	b = append(b, '\n')
	return append(b, body...)
}

// ErrKeyUnavailable marks a key source's failure that says nothing about
// the key: the place keys are kept could not be reached or read (a NATS
// outage, a bucket being made anew). A message whose signer's key is
// unavailable is neither delivered nor refused: it stays on the inbox and
// is tried again (keyRetry), so an outage delays messages and loses none.
var ErrKeyUnavailable = errors.New("the team's keys cannot be read right now")

// keyRetry is how long a message whose key was unavailable waits before
// it is tried again.
const keyRetry = time.Second

// errDead marks a message that is not a team message at all: it is
// dead-lettered. Anything else open refuses is a message that may be one
// but cannot be trusted; it is dead-lettered too, reported as refused.
var errDead = errors.New("does not parse as a team message")

// protocolAnswers are the types only the lead may send: its answers to
// permission and plan requests, and its request to stop.
var protocolAnswers = map[mailbox.Type]bool{
	mailbox.TypePermissionResponse:   true,
	mailbox.TypePlanApprovalResponse: true,
	mailbox.TypeShutdownRequest:      true,
}

// open parses and checks a message delivered to agent's inbox.
func (t *Transport) open(msg *jetstream.RawStreamMsg, agent string) (mailbox.Message, error) {
	m, err := mailbox.ParseLine(msg.Data)
	if err != nil {
		return mailbox.Message{}, fmt.Errorf("%w: %v", errDead, err)
	}
	if m.To != agent {
		return mailbox.Message{}, fmt.Errorf("%w: it is addressed to %q, not %q", errDead, clip.String(m.To, 64), agent)
	}
	h := msg.Header
	signer, sig64 := h.Get(HeaderKey), h.Get(HeaderSignature)
	if signer == "" || sig64 == "" {
		return m, fmt.Errorf("message %s from %q is not signed; team messages must be signed by their sender", m.ID, m.From)
	}
	if signer != m.From {
		return m, fmt.Errorf("message %s says it is from %q but is signed by %q", m.ID, m.From, clip.String(signer, 64))
	}
	pub, err := t.cfg.Keys.public(signer)
	if err != nil {
		if errors.Is(err, ErrKeyUnavailable) {
			return m, fmt.Errorf("message %s from %q: %w", m.ID, signer, err)
		}
		return m, fmt.Errorf("message %s is signed by %q, whose key this team does not know: %v", m.ID, signer, err)
	}
	sig, err := base64.StdEncoding.DecodeString(sig64)
	if err != nil {
		return m, fmt.Errorf("message %s from %q: the signature does not verify (it is not base64)", m.ID, signer)
	}
	id, sent := h.Get(jetstream.MsgIDHeader), h.Get(HeaderSent)
	body := signed(msg.Subject, id, sent, msg.Data)
	if !ed25519.Verify(pub, body, sig) {
		now, err := t.cfg.Keys.renewed(signer, pub)
		if now == nil || !ed25519.Verify(now, body, sig) {
			why := ""
			if id != m.ID {
				why = fmt.Sprintf("; its Nats-Msg-Id header is %q, not its id (a re-publish that dropped or changed it)", clip.String(id, 64))
			}
			if err != nil {
				why += "; the team's key of " + signer + " could not be read again: " + err.Error()
			}
			return m, fmt.Errorf("message %s from %q: the signature does not verify (altered, or signed with another key)%s", m.ID, signer, why)
		}
	}
	if id != m.ID {
		return m, fmt.Errorf("message %s from %q: it was signed and published under the id %q, not its own: a message is published under its id, which the server's duplicate check reads", m.ID, m.From, clip.String(id, 64))
	}
	if err := t.fresh(msg, sent); err != nil {
		return m, fmt.Errorf("message %s from %q: %v", m.ID, m.From, err)
	}
	if protocolAnswers[m.Type] && m.From != t.cfg.Lead {
		return m, fmt.Errorf("message %s: %s from %q refused: only the lead (%s) may send it", m.ID, m.Type, m.From, t.cfg.Lead)
	}
	return m, nil
}

// fresh checks that the server stored msg within Config.FreshWindow of
// its signed send time: a message re-published later, its signature
// intact, is refused (package doc, "Replays").
func (t *Transport) fresh(msg *jetstream.RawStreamMsg, sent string) error {
	at, err := time.Parse(time.RFC3339Nano, sent)
	if err != nil {
		return fmt.Errorf("its signed %s header %q is not a time", HeaderSent, clip.String(sent, 64))
	}
	if d := msg.Time.Sub(at); d > t.cfg.FreshWindow || d < -t.cfg.FreshWindow {
		return fmt.Errorf("signed at %s but stored by the server at %s, %s apart; a message must be stored within %s of signing: a replay of a captured message, or a sender's clock that is off (check the machines' clocks)",
			at.Format(time.RFC3339Nano), msg.Time.UTC().Format(time.RFC3339Nano), d.Round(time.Millisecond), t.cfg.FreshWindow)
	}
	return nil
}

// refuse dead-letters msg with its subject and reason and reports it. It
// says whether the dead letter was stored: if not, the message is not
// taken (the inbox tries it again), so nothing is dropped unreported.
func (t *Transport) refuse(msg *jetstream.RawStreamMsg, agent string, why error) bool {
	subject := msg.Subject
	dead := nats.NewMsg(t.deadLetter(agent))
	dead.Data = msg.Data
	for k, v := range msg.Header {
		dead.Header[k] = v
	}
	dead.Header.Set(HeaderDeadSubject, subject)
	dead.Header.Set(HeaderDeadReason, why.Error())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := t.js.PublishMsg(ctx, dead, jetstream.WithMsgID(fmt.Sprintf("dead-%d", msg.Sequence))); err != nil {
		t.cfg.OnProblem(mailbox.Problem{Agent: agent, Path: subject,
			Reason: fmt.Sprintf("%v; could not dead-letter it (%v): it stays and will be tried again", why, err)})
		return false
	}
	reason := "refused: " + why.Error()
	if errors.Is(why, errDead) {
		reason = "the message " + why.Error()
	}
	t.cfg.OnProblem(mailbox.Problem{Agent: agent, Path: subject,
		Reason: fmt.Sprintf("%s; dead-lettered to %s", reason, t.deadLetter(agent))})
	return true
}
