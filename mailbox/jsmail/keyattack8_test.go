package jsmail

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/mailbox"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// keyattack8 (issue 42, session 13): an outside attacker with the team's
// NATS credentials against the inbox read by its owner's cursor
// (/work/notes/keyattack8-log.md). An attack that gets through is skipped
// unless KEYATTACK_ESCAPES=1, and fails then.

func escape8(t *testing.T, what string) {
	t.Helper()
	if os.Getenv("KEYATTACK_ESCAPES") != "1" {
		t.Skip("known escape (keyattack8-log.md): " + what + "; KEYATTACK_ESCAPES=1 runs it")
	}
}

// updateStream changes the team's stream as the attacker, from its
// current configuration.
func updateStream(t *testing.T, js jetstream.JetStream, name string, change func(*jetstream.StreamConfig)) {
	t.Helper()
	s, err := js.Stream(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	cfg := info.Config
	change(&cfg)
	if _, err := js.UpdateStream(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
}

// TestKeyattack8DirectGetAnsweredByTheAttacker (idea 1): the attacker
// turns the stream's AllowDirect off — a setting the inbox's check of the
// stream does not look at — so the server no longer answers
// $JS.API.DIRECT.GET.<stream>, and answers the owner's batched get
// itself: one junk message on alice's subject at sequence 1,000,000, then
// the end of the batch. The inbox dead-letters the junk and moves its
// cursor past it, over alice's three real messages below; the attacker
// turns AllowDirect back on. Alice never gets the three: lost, with only
// the junk reported.
func TestKeyattack8DirectGetAnsweredByTheAttacker(t *testing.T) {
	escape8(t, "the batched direct get is answered by whoever subscribes to it; AllowDirect off is not checked")
	f := newFixture(t, Config{CheckInterval: 100 * time.Millisecond}, []string{"team-lead"}, "alice")
	in := f.open(t, "alice")
	gather(t, in, map[string]bool{f.send(t, mailbox.Message{From: "team-lead", To: "alice", Text: "before"}).ID: true}, 0)
	in.Close()

	js := rawJS(t, f)
	stream := f.tr.names.stream
	updateStream(t, js, stream, func(c *jetstream.StreamConfig) { c.AllowDirect = false })
	want := map[string]bool{}
	for i := range 3 {
		want[f.send(t, mailbox.Message{From: "team-lead", To: "alice", Text: "real " + itoa(i)}).ID] = true
	}

	atk := connect(t, f.srv.URL())
	answered := make(chan struct{})
	sub, err := atk.Subscribe("$JS.API.DIRECT.GET."+stream, func(req *nats.Msg) {
		select {
		case <-answered:
			return
		default:
		}
		m := nats.NewMsg(req.Reply)
		m.Header.Set(jetstream.StreamHeader, stream)
		m.Header.Set(jetstream.SequenceHeader, strconv.Itoa(1_000_000))
		m.Header.Set(jetstream.SubjectHeader, f.tr.inbox("alice"))
		m.Header.Set(jetstream.TimeStampHeaer, time.Now().UTC().Format(time.RFC3339Nano))
		m.Data = []byte("junk")
		atk.PublishMsg(m)
		end := nats.NewMsg(req.Reply)
		end.Header.Set("Status", "204")
		atk.PublishMsg(end)
		close(answered)
	})
	if err != nil {
		t.Fatal(err)
	}
	atk.Flush()

	in = f.open(t, "alice")
	select {
	case <-answered:
	case <-time.After(15 * time.Second):
		t.Fatal("the inbox never asked for a batch")
	}
	sub.Unsubscribe()
	updateStream(t, js, stream, func(c *jetstream.StreamConfig) { c.AllowDirect = true })
	gather(t, in, want, 0)
}

// TestKeyattack8LimitFlippedAndBack (idea 7): alice is away (her inbox
// closed). The attacker sets the stream's MaxMsgsPerSubject to 1 — the
// server drops all but the newest message of each inbox at once, deny
// delete or not — and sets it back to none a moment later. The inbox
// checks the stream's limits only while it is open, and then only as
// they are now: alice, opened again, gets one of her three messages and
// no report.
func TestKeyattack8LimitFlippedAndBack(t *testing.T) {
	escape8(t, "a limit set and unset between two checks drops mail unseen")
	f := newFixture(t, Config{CheckInterval: 100 * time.Millisecond}, []string{"team-lead"}, "alice")
	in := f.open(t, "alice")
	gather(t, in, map[string]bool{f.send(t, mailbox.Message{From: "team-lead", To: "alice", Text: "before"}).ID: true}, 0)
	in.Close()
	want := map[string]bool{}
	for i := range 3 {
		want[f.send(t, mailbox.Message{From: "team-lead", To: "alice", Text: "real " + itoa(i)}).ID] = true
	}
	js := rawJS(t, f)
	updateStream(t, js, f.tr.names.stream, func(c *jetstream.StreamConfig) { c.MaxMsgsPerSubject = 1 })
	updateStream(t, js, f.tr.names.stream, func(c *jetstream.StreamConfig) { c.MaxMsgsPerSubject = -1 })
	in = f.open(t, "alice")
	gather(t, in, want, 0)
}

// TestKeyattack8DirectGetReordered (idea 1, order): as above, the
// attacker answers alice's batched get with AllowDirect off, but with
// nothing forged: the lead's two genuine messages, each under the
// other's sequence and in the other's place. Both verify and are fresh
// (their real stored times); alice takes the second before the first,
// and her cursor counts both taken. The file mailbox hands an inbox's
// messages in the order they were sent.
func TestKeyattack8DirectGetReordered(t *testing.T) {
	escape8(t, "the batched direct get is answered by whoever subscribes to it; the order is the answer's")
	f := newFixture(t, Config{CheckInterval: 100 * time.Millisecond}, []string{"team-lead"}, "alice")
	in := f.open(t, "alice")
	gather(t, in, map[string]bool{f.send(t, mailbox.Message{From: "team-lead", To: "alice", Text: "before"}).ID: true}, 0)
	in.Close()

	js := rawJS(t, f)
	stream := f.tr.names.stream
	updateStream(t, js, stream, func(c *jetstream.StreamConfig) { c.AllowDirect = false })
	first := f.send(t, mailbox.Message{From: "team-lead", To: "alice", Text: "first: stop all work"})
	second := f.send(t, mailbox.Message{From: "team-lead", To: "alice", Text: "second: carry on"})
	st, err := js.Stream(t.Context(), stream) // AllowDirect off: the leader's message get
	if err != nil {
		t.Fatal(err)
	}
	var raws []*jetstream.RawStreamMsg
	for seq := uint64(1); len(raws) < 2; {
		raw, err := st.GetMsg(t.Context(), seq, jetstream.WithGetMsgSubject(f.tr.inbox("alice")))
		if err != nil {
			t.Fatal(err)
		}
		if raw.Header.Get(jetstream.MsgIDHeader) == first.ID || raw.Header.Get(jetstream.MsgIDHeader) == second.ID {
			raws = append(raws, raw)
		}
		seq = raw.Sequence + 1
	}

	atk := connect(t, f.srv.URL())
	answered := make(chan struct{})
	sub, err := atk.Subscribe("$JS.API.DIRECT.GET."+stream, func(req *nats.Msg) {
		select {
		case <-answered:
			return
		default:
		}
		for i, raw := range []*jetstream.RawStreamMsg{raws[1], raws[0]} {
			m := nats.NewMsg(req.Reply)
			for k, v := range raw.Header {
				m.Header[k] = v
			}
			m.Header.Set(jetstream.StreamHeader, stream)
			m.Header.Set(jetstream.SequenceHeader, strconv.FormatUint(raws[i].Sequence, 10))
			m.Header.Set(jetstream.SubjectHeader, raw.Subject)
			m.Header.Set(jetstream.TimeStampHeaer, raw.Time.UTC().Format(time.RFC3339Nano))
			m.Data = raw.Data
			atk.PublishMsg(m)
		}
		end := nats.NewMsg(req.Reply)
		end.Header.Set("Status", "204")
		atk.PublishMsg(end)
		close(answered)
	})
	if err != nil {
		t.Fatal(err)
	}
	atk.Flush()

	in = f.open(t, "alice")
	select {
	case <-answered:
	case <-time.After(15 * time.Second):
		t.Fatal("the inbox never asked for a batch")
	}
	sub.Unsubscribe()
	updateStream(t, js, stream, func(c *jetstream.StreamConfig) { c.AllowDirect = true })
	got := receive(t, in, 2)
	if got[0].ID != first.ID || got[1].ID != second.ID {
		t.Fatalf("alice took %q before %q: the lead sent them the other way round", got[0].Text, got[1].Text)
	}
}
