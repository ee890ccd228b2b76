package jsmail

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/remote"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// natsMsg is m as Append would publish it to agent's inbox, signed by
// m.From with f's keys.
func natsMsg(t *testing.T, f *fixture, agent string, m mailbox.Message) *nats.Msg {
	t.Helper()
	body, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	msg := nats.NewMsg(f.tr.inbox(agent))
	msg.Data = body
	msg.Header.Set(jetstream.MsgIDHeader, m.ID)
	if err := f.keys.sign(msg, m.From); err != nil {
		t.Fatal(err)
	}
	return msg
}

func message(from, to string, p mailbox.Payload) mailbox.Message {
	m, err := mailbox.NewMessage(from, to, p)
	if err != nil {
		panic(err)
	}
	m.ID, m.Timestamp = mailbox.NewID(time.Now()), time.Now().UTC().Truncate(time.Millisecond)
	return m
}

// TestForgeries: a client that may publish on the team's subjects tries
// every way in — no signature, a key the team does not know, a member's
// key with the lead's name, an altered body, a member answering a
// permission request, a member's name on a key it does not hold. Each is
// refused, reported with its subject and kept as a dead letter; only the
// lead's own answer and a member's own message arrive.
func TestForgeries(t *testing.T) {
	// The lead's key is a remote agents' lead key, as the team uses it.
	leadKey, err := remote.LoadOrCreateKey(filepath.Join(t.TempDir(), "lead.key"))
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, Config{}, []string{"alice"}, "team-lead", "alice")
	if err := f.keys.Own("team-lead", leadKey); err != nil {
		t.Fatal(err)
	}
	mallory := NewKeys()
	if err := mallory.Own("mallory", newKey(t)); err != nil {
		t.Fatal(err)
	}
	if err := mallory.Own("team-lead", newKey(t)); err != nil { // a key of its own under the lead's name
		t.Fatal(err)
	}
	in := f.open(t, "alice")
	allow := mailbox.PermissionResponse{RequestID: "r1", Decision: mailbox.DecisionAllow}
	publish := func(msg *nats.Msg) {
		t.Helper()
		if _, err := f.tr.js.PublishMsg(t.Context(), msg); err != nil {
			t.Fatal(err)
		}
	}
	// 1. unsigned
	unsigned := natsMsg(t, f, "alice", message("team-lead", "alice", allow))
	unsigned.Header.Del(HeaderSignature)
	publish(unsigned)
	// 2. signed by a key the team does not know, as itself
	m2 := natsMsg(t, f, "alice", message("team-lead", "alice", allow))
	m2.Data = []byte(strings.Replace(string(m2.Data), `"from":"team-lead"`, `"from":"mallory"`, 1))
	if err := mallory.sign(m2, "mallory"); err != nil {
		t.Fatal(err)
	}
	publish(m2)
	// 3. the lead's name, mallory's key
	m3 := natsMsg(t, f, "alice", message("team-lead", "alice", allow))
	if err := mallory.sign(m3, "team-lead"); err != nil {
		t.Fatal(err)
	}
	publish(m3)
	// 4. the lead's real signature over a different body
	m4 := natsMsg(t, f, "alice", message("team-lead", "alice", allow))
	m4.Data = []byte(strings.Replace(string(m4.Data), "allow", "allow ", 1))
	publish(m4)
	// 5. a member (properly signed) answering a permission request
	m5 := natsMsg(t, f, "alice", message("alice", "alice", allow))
	publish(m5)
	// 6. a signature header that is not base64
	m6 := natsMsg(t, f, "alice", message("team-lead", "alice", allow))
	m6.Header.Set(HeaderSignature, "!!")
	publish(m6)
	// What may come: the lead's answer, a member's message.
	good := f.send(t, message("team-lead", "alice", allow))
	chat := f.send(t, mailbox.Message{From: "alice", To: "alice", Text: "note to self"})

	got := receive(t, in, 2)
	if len(got) != 2 || got[0].ID != good.ID || got[1].ID != chat.ID {
		t.Fatalf("delivered %v, want only %s and %s", ids(got), good.ID, chat.ID)
	}
	probs := f.pr.wait(t, 6)
	want := []string{"is not signed", "whose key this team does not know", "the signature does not verify",
		"the signature does not verify", "only the lead (team-lead) may send it", "the signature does not verify"}
	for i, p := range probs {
		if p.Agent != "alice" || p.Path != "cohort.team.t.inbox.alice" || !strings.Contains(p.Reason, "refused: ") ||
			!strings.Contains(p.Reason, want[i]) || !strings.Contains(p.Reason, "dead-lettered to cohort.team.t.dead.alice") {
			t.Errorf("report %d = %q, want a refusal of alice's subject saying %q", i, p, want[i])
		}
	}
	if n, err := f.tr.DeadLetters(t.Context(), "alice"); err != nil || n != 6 {
		t.Fatalf("dead letters = %d (%v), want 6", n, err)
	}
	if err := in.Ack(t.Context(), ids(got)...); err != nil {
		t.Fatal(err)
	}
	if n := pending(t, f, "alice"); n != 0 {
		t.Fatalf("pending = %d: a refused message was left in the inbox", n)
	}
}

// TestDeadLetters: what does not parse, or is addressed elsewhere, is kept
// aside with its subject and reason, reported, and delivery goes on.
func TestDeadLetters(t *testing.T) {
	f := newFixture(t, Config{}, []string{"alice"}, "bob")
	in := f.open(t, "bob")
	subj := f.tr.inbox("bob")
	if err := f.nc.Publish(subj, []byte("{not json")); err != nil {
		t.Fatal(err)
	}
	misaddressed := natsMsg(t, f, "bob", mailbox.Message{ID: "x1", From: "alice", To: "carol", Text: "hi", Timestamp: time.Now()})
	if err := f.nc.PublishMsg(misaddressed); err != nil {
		t.Fatal(err)
	}
	ok := f.send(t, mailbox.Message{From: "alice", To: "bob", Text: "fine"})
	if got := receive(t, in, 1); got[0].ID != ok.ID {
		t.Fatalf("got %v", ids(got))
	}
	if err := in.Ack(t.Context(), ok.ID); err != nil {
		t.Fatal(err)
	}
	probs := f.pr.wait(t, 2)
	if !strings.Contains(probs[0].Reason, "does not parse as a team message") || probs[0].Path != subj ||
		!strings.Contains(probs[1].Reason, `addressed to "carol"`) {
		t.Fatalf("reports %v", probs)
	}
	// The dead letter keeps the body, the subject and the reason.
	// The first dead letter is the unparseable one; the last, the other.
	dl, err := f.tr.stream.GetMsg(t.Context(), 1, jetstream.WithGetMsgSubject(f.tr.deadLetter("bob")))
	if err != nil {
		t.Fatal(err)
	}
	if string(dl.Data) != "{not json" || dl.Header.Get(HeaderDeadSubject) != subj ||
		!strings.Contains(dl.Header.Get(HeaderDeadReason), "does not parse") {
		t.Fatalf("dead letter %q headers %v", dl.Data, dl.Header)
	}
}

// TestKeysRefuseBadInput: keys are checked when they are added, and a
// process cannot sign as a member whose key it lacks.
func TestKeysRefuseBadInput(t *testing.T) {
	k := NewKeys()
	if err := k.Own("a/b", newKey(t)); err == nil {
		t.Error("a name that is no agent name was accepted")
	}
	if err := k.Trust("bob", []byte("short")); err == nil || !strings.Contains(err.Error(), `"bob"`) {
		t.Errorf("short public key: %v", err)
	}
	msg := nats.NewMsg("s")
	if err := k.sign(msg, "carol"); err == nil || !strings.Contains(err.Error(), "no key for sender") {
		t.Errorf("signing without a key: %v", err)
	}
}

// TestDeadLettersLeaveNothingPending: messages the inbox dead-letters
// move its owner's cursor with no Ack, and Pending (read from any
// process) says so. A lead that waits for an idle member's inbox to be
// empty waited for ever on three forgeries before (TestTeamAcrossMachines).
func TestDeadLettersLeaveNothingPending(t *testing.T) {
	f := newFixture(t, Config{}, []string{"alice"}, "bob")
	f.open(t, "bob")
	for _, body := range []string{"{not json", "[]"} {
		if err := f.nc.Publish(f.tr.inbox("bob"), []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	f.pr.wait(t, 2)
	deadline := time.Now().Add(10 * time.Second)
	for n := pending(t, f, "bob"); n != 0; n = pending(t, f, "bob") {
		if time.Now().After(deadline) {
			t.Fatalf("Pending(bob) = %d with only dead letters in the inbox and nothing to acknowledge, want 0", n)
		}
		time.Sleep(20 * time.Millisecond) // polling the server's answer, not waiting out a race
	}
}
