package jsmail

import (
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/mailbox"
	"github.com/nats-io/nats.go"
)

// TestBodilessMessageOnALiveConsumer: a sender's empty message carrying
// the Nats-Msg-Size header of a headers-only delivery, on a consumer that
// is not headers only, is refused (dead-lettered, reported) as any bad
// message, not taken for a changed consumer: the inbox is not made anew
// over and over, and keeps hearing.
func TestBodilessMessageOnALiveConsumer(t *testing.T) {
	f := newFixture(t, Config{CheckInterval: 100 * time.Millisecond}, []string{"team-lead"}, "alice")
	in := f.open(t, "alice")
	next(t, in, f.send(t, mailbox.Message{From: "team-lead", To: "alice", Text: "before"}), "the first message")
	m := nats.NewMsg(f.tr.inbox("alice"))
	m.Header.Set(nats.MsgSize, "120")
	if _, err := rawJS(t, f).PublishMsg(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	got := f.pr.wait(t, 1)
	if !strings.Contains(got[0].Reason, "does not parse") {
		t.Fatalf("problems = %v, want the bodiless message refused", got)
	}
	heardWithin(t, f, in, 5*time.Second, "a bodiless message")
	for _, p := range f.pr.all() {
		if strings.Contains(p.Reason, "made anew") {
			t.Fatalf("the inbox was made anew for a sender's message: %v", f.pr.all())
		}
	}
}
