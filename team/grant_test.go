package team

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/natstest"
	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/mailbox/jsmail"
	"github.com/cohort-dev/cohort/remote"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// reporter collects a transport's reports.
type reporter chan mailbox.Problem

func (r reporter) config() mailbox.Config {
	mc := quietMailbox()
	mc.OnProblem = func(p mailbox.Problem) { r <- p }
	return mc
}

// expect waits for a report whose reason has every one of want.
func (r reporter) expect(t *testing.T, who string, want ...string) {
	t.Helper()
	select {
	case p := <-r:
		for _, w := range want {
			if !strings.Contains(p.Reason, w) {
				t.Fatalf("%s's report %q lacks %q", who, p.Reason, w)
			}
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("%s reported nothing; want a refusal with %q", who, want)
	}
}

// leadMachine makes team "t" on srv with members, on a machine of its
// own, and opens the lead's inbox.
func leadMachine(t *testing.T, srv string, r reporter, members ...string) (*Store, mailbox.Transport, mailbox.Inbox) {
	t.Helper()
	lead, err := NewStore(StoreConfig{Root: t.TempDir(), Mailbox: r.config()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lead.Close)
	if _, err := lead.Create(t.Context(), CreateSpec{Name: "t", NATS: srv}); err != nil {
		t.Fatal(err)
	}
	for _, m := range members {
		if _, err := lead.AddMember(t.Context(), "t", MemberSpec{Name: m}); err != nil {
			t.Fatal(err)
		}
	}
	mb, err := lead.Mailbox("t")
	if err != nil {
		t.Fatal(err)
	}
	return lead, mb, openInbox(t, mb, LeadName)
}

// workerMachine is another machine that runs member of team "t" as a
// worker does with a teammate spawn: it joins, pins the lead's key and
// claims the member's key, which the lead admits with the spawn's secret.
func workerMachine(t *testing.T, lead *Store, srv string, r reporter, member string) (*Store, mailbox.Transport) {
	t.Helper()
	s, err := NewStore(StoreConfig{Root: t.TempDir(), Mailbox: r.config()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	if _, err := s.Join(t.Context(), "t", srv); err != nil {
		t.Fatal(err)
	}
	leadPub, err := lead.LeadKey("t")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PinKey("t", LeadName, leadPub); err != nil {
		t.Fatal(err)
	}
	mark, err := lead.SpawnTerms("t")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PinTerms("t", mark); err != nil {
		t.Fatal(err)
	}
	grants, err := lead.SpawnGrants("t")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PinGrants("t", grants); err != nil {
		t.Fatal(err)
	}
	admit(t, lead, s, member)
	mb, err := s.Mailbox("t")
	if err != nil {
		t.Fatal(err)
	}
	return s, mb
}

// admit runs a spawn's key exchange: far claims member's key with a fresh
// join secret while the lead admits it.
func admit(t *testing.T, lead, far *Store, member string) {
	t.Helper()
	secret := NewJoinSecret()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	claimed := make(chan error, 1)
	go func() { claimed <- far.ClaimKey(ctx, "t", member, secret) }()
	for {
		if ok, _ := lead.Admit(ctx, "t", member, secret); ok {
			break
		}
		select {
		case err := <-claimed:
			t.Fatalf("the claim of %s ended before the lead admitted it: %v", member, err)
		case <-ctx.Done():
			t.Fatalf("the lead did not admit %s", member)
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := <-claimed; err != nil {
		t.Fatal(err)
	}
}

// send appends a message from one member to another and fails the test
// if the transport refuses.
func send(t *testing.T, mb mailbox.Transport, from, to, text string) {
	t.Helper()
	if _, err := mb.Append(t.Context(), mailbox.Message{From: from, To: to, Text: text}); err != nil {
		t.Fatal(err)
	}
}

// heard sends text as carl to the lead and to dana, and checks that it is
// the next message each of them gets.
func heard(t *testing.T, carl mailbox.Transport, leadIn, danaIn mailbox.Inbox, text string) {
	t.Helper()
	send(t, carl, "carl", LeadName, text)
	send(t, carl, "carl", "dana", text)
	if got := receiveOne(t, leadIn); got.From != "carl" || got.Text != text {
		t.Fatalf("the lead got %+v, want carl's %q", got, text)
	}
	if got := receiveOne(t, danaIn); got.From != "carl" || got.Text != text {
		t.Fatalf("dana got %+v, want carl's %q", got, text)
	}
}

// attacker is a raw NATS client with the run of the team's server, as a
// model-controlled process holding the team's credentials would be.
type attacker struct {
	nc *nats.Conn
	kv jetstream.KeyValue
}

func newAttacker(t *testing.T, srv string) *attacker {
	t.Helper()
	nc, err := nats.Connect(srv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(t.Context(), StateBucket("t"))
	if err != nil {
		t.Fatal(err)
	}
	return &attacker{nc: nc, kv: kv}
}

// forge publishes a message from → to signed with key, as jsmail signs.
func (a *attacker) forge(t *testing.T, key ed25519.PrivateKey, from, to, text string) {
	t.Helper()
	m := mailbox.Message{ID: mailbox.NewID(time.Now()), From: from, To: to, Text: text, Timestamp: time.Now().UTC().Truncate(time.Millisecond)}
	body, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	a.raw(t, key, from, to, m.ID, body)
}

// raw publishes body (whose id is id) on to's inbox, signed as signer
// with key, as jsmail signs.
func (a *attacker) raw(t *testing.T, key ed25519.PrivateKey, signer, to, id string, body []byte) {
	t.Helper()
	msg := nats.NewMsg(jsmail.Subject("cohort", "t", to))
	msg.Data = body
	if err := jsmail.Sign(msg, signer, id, key); err != nil {
		t.Fatal(err)
	}
	if err := a.nc.PublishMsg(msg); err != nil {
		t.Fatal(err)
	}
	if err := a.nc.Flush(); err != nil {
		t.Fatal(err)
	}
}

func (a *attacker) entry(t *testing.T, member string) []byte {
	t.Helper()
	e, err := a.kv.Get(t.Context(), GrantKey(member))
	if err != nil {
		t.Fatal(err)
	}
	return e.Value()
}

func (a *attacker) put(t *testing.T, member string, data []byte) {
	t.Helper()
	if _, err := a.kv.Put(t.Context(), GrantKey(member), data); err != nil {
		t.Fatal(err)
	}
}

// TestASwappedMemberKeyInTheBucketIsRefused: someone who may write the
// team's bucket replaces carl's key in carl's entry with their own and
// sends as carl, to the lead and to dana (a teammate on a third machine,
// who reads carl's key from the bucket). Both refuse the forgery and
// report it naming the entry; neither receives it: the next message each
// gets is carl's real one. An entry the attacker signs with a lead key of
// their own fails the same way, and so does a claim of carl's key made
// without the spawn's secret.
func TestASwappedMemberKeyInTheBucketIsRefused(t *testing.T) {
	srv := natstest.Start(t).URL()
	leadR, danaR := make(reporter, 8), make(reporter, 8)
	lead, _, leadIn := leadMachine(t, srv, leadR, "carl", "dana")
	_, carl := workerMachine(t, lead, srv, make(reporter, 8), "carl")
	_, dana := workerMachine(t, lead, srv, danaR, "dana")
	danaIn := openInbox(t, dana, "dana")

	// Before the attack, both hear carl (and keep his key).
	heard(t, carl, leadIn, danaIn, "one")

	a := newAttacker(t, srv)
	_, evil, _ := ed25519.GenerateKey(rand.Reader)
	var g KeyGrant
	if err := json.Unmarshal(a.entry(t, "carl"), &g); err != nil {
		t.Fatal(err)
	}
	g.PublicKey = base64.StdEncoding.EncodeToString(evil.Public().(ed25519.PublicKey))
	g.Generation += 10
	swapped, _ := json.Marshal(g)
	a.put(t, "carl", swapped)
	a.forge(t, evil, "carl", LeadName, "forged")
	a.forge(t, evil, "carl", "dana", "forged")
	// Each reports the entry, keeps carl's key it accepted before, and
	// refuses the forgery with it.
	entry := []string{"carl", StateBucket("t"), GrantKey("carl"), "does not verify with the lead's key", "stays in force"}
	forged := []string{"carl", "signature does not verify"}
	leadR.expect(t, "the lead", entry...)
	leadR.expect(t, "the lead", forged...)
	danaR.expect(t, "dana", entry...)
	danaR.expect(t, "dana", forged...)

	// The same entry signed with a lead key of the attacker's own.
	g.Signature = signValue(grantContext, g.unsigned(), evil)
	resigned, _ := json.Marshal(g)
	a.put(t, "carl", resigned)
	a.forge(t, evil, "carl", "dana", "forged again")
	danaR.expect(t, "dana", entry...)
	danaR.expect(t, "dana", forged...)

	// A claim of the attacker's key, made without the spawn's secret, is
	// not signed by the lead.
	claim, _ := json.Marshal(keyClaim{Team: "t", Member: "carl", PublicKey: g.PublicKey, Machine: "evil", Proof: base64.StdEncoding.EncodeToString(make([]byte, 32))})
	if _, err := a.kv.Put(t.Context(), ClaimKey("carl"), claim); err != nil {
		t.Fatal(err)
	}
	if ok, err := lead.Admit(t.Context(), "t", "carl", NewJoinSecret()); ok || err == nil || !strings.Contains(err.Error(), "join secret") {
		t.Fatalf("the lead admitted a claim without the spawn's secret: %v, %v", ok, err)
	}

	// Nothing forged was delivered: carl's next real message is the next
	// each gets.
	heard(t, carl, leadIn, danaIn, "two")
}

// TestARespawnedTeammateIsHeardWithItsNewKeyOnly is issue 42's respawn:
// carl runs on one worker, dies, and is spawned again on another, with a
// new key the lead signs as generation 2. The lead, which held carl's old
// key, hears the new carl; a message signed with the old key is refused.
// Then the bucket's entry is rolled back to generation 1 (a replay of the
// old signed entry by someone holding the old key): the lead and dana
// refuse it as a replay, and the new carl is still heard.
func TestARespawnedTeammateIsHeardWithItsNewKeyOnly(t *testing.T) {
	srv := natstest.Start(t).URL()
	leadR, danaR := make(reporter, 8), make(reporter, 8)
	lead, _, leadIn := leadMachine(t, srv, leadR, "carl", "dana")
	w1, carl1 := workerMachine(t, lead, srv, make(reporter, 8), "carl")
	_, dana := workerMachine(t, lead, srv, danaR, "dana")
	danaIn := openInbox(t, dana, "dana")
	heard(t, carl1, leadIn, danaIn, "from the first worker")
	a := newAttacker(t, srv)
	gen1 := a.entry(t, "carl")
	oldKey, err := remote.LoadOrCreateKey(filepath.Join(w1.Root(), "t", KeysDir, "carl.key"))
	if err != nil {
		t.Fatal(err)
	}

	_, carl2 := workerMachine(t, lead, srv, make(reporter, 8), "carl")
	var g KeyGrant
	if err := json.Unmarshal(a.entry(t, "carl"), &g); err != nil || g.Generation != 2 || g.PublicKey == base64.StdEncoding.EncodeToString(oldKey.Public().(ed25519.PublicKey)) {
		t.Fatalf("carl's entry after the respawn: %+v (%v); want generation 2 with a new key", g, err)
	}
	heard(t, carl2, leadIn, danaIn, "from the second worker")

	// The old worker's carl is not carl any more.
	send(t, carl1, "carl", LeadName, "stale")
	leadR.expect(t, "the lead", "signature does not verify")

	// A replay of generation 1, and a message signed with its key.
	a.put(t, "carl", gen1)
	a.forge(t, oldKey, "carl", LeadName, "replayed")
	a.forge(t, oldKey, "carl", "dana", "replayed")
	want := []string{"generation 1, older than generation 2", "replayed entry", GrantKey("carl")}
	leadR.expect(t, "the lead", want...)
	danaR.expect(t, "dana", want...)

	send(t, carl2, "carl", LeadName, "still me")
	if got := receiveOne(t, leadIn); got.Text != "still me" {
		t.Fatalf("the lead got %+v, want the new carl's message", got)
	}
}
