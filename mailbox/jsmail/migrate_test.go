package jsmail

import (
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/internal/natstest"

	"github.com/nats-io/nats.go/jetstream"
)

// TestOpenReplacesAnEarlierWorkQueueStream: a team stream of an earlier
// version (work-queue retention, which the server does not change) is
// made anew as this version reads it when no inbox holds a message, and
// refused, saying what to do, when one does.
func TestOpenReplacesAnEarlierWorkQueueStream(t *testing.T) {
	for _, waiting := range []int{0, 2} {
		srv := natstest.Start(t)
		nc := connect(t, srv.URL())
		js, err := jetstream.New(nc)
		if err != nil {
			t.Fatal(err)
		}
		n := namesFor("cohort", "t")
		if _, err := js.CreateStream(t.Context(), jetstream.StreamConfig{Name: n.stream, Subjects: []string{n.inbox + ".*", n.dead + ".*"},
			Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage}); err != nil {
			t.Fatal(err)
		}
		for range waiting {
			if _, err := js.Publish(t.Context(), n.inbox+".alice", []byte("{}")); err != nil {
				t.Fatal(err)
			}
		}
		pr := newProblems()
		tr, err := Open(t.Context(), Config{Conn: nc, Team: "t", Keys: NewKeys(), OnProblem: pr.add, StateDir: t.TempDir()})
		if waiting > 0 {
			if err == nil || !strings.Contains(err.Error(), "earlier version") || !strings.Contains(err.Error(), "holds 2 messages") {
				t.Fatalf("Open on an earlier version's stream holding mail: %v, want a refusal saying so", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("Open on an earlier version's empty stream: %v", err)
		}
		if c := tr.stream.CachedInfo().Config; c.Retention != jetstream.LimitsPolicy || !c.DenyDelete || !c.DenyPurge {
			t.Fatalf("the stream after Open: retention %s, deny delete %t, deny purge %t", c.Retention, c.DenyDelete, c.DenyPurge)
		}
		if ps := pr.all(); len(ps) != 1 || !strings.Contains(ps[0].Reason, "earlier version") {
			t.Fatalf("reports %v, want one saying the stream was made anew", ps)
		}
	}
}
