package team

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/natstest"
	"github.com/cohort-dev/cohort/tasklist"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// keyattack8 (issue 42, session 13): an outside attacker with the team's
// NATS credentials against the shared task list's compare-and-set
// (/work/notes/keyattack8-log.md). An attack that gets through is
// skipped unless KEYATTACK_ESCAPES=1, and fails then.

func escape8(t *testing.T, what string) {
	t.Helper()
	if os.Getenv("KEYATTACK_ESCAPES") != "1" {
		t.Skip("known escape (keyattack8-log.md): " + what + "; KEYATTACK_ESCAPES=1 runs it")
	}
}

// TestKeyattack8TaskClaimedTwiceThroughAnAnsweredRead (idea 17): kvcas
// reads the task list with the stream message API (a request on
// $JS.API.STREAM.MSG.GET.KV_<bucket>), and takes the first answer. The
// attacker subscribes to that subject too and answers every read of
// "tasks" with the list as it was before m1 claimed the task, at the
// list's current revision. A machine whose read the attacker answers
// first (about a third of reads on a loopback server, measured) claims
// the task for m2 over m1's claim: the compare-and-set holds, since the
// revision is the real one. Each round is a fresh machine (one that read
// the genuine list would refuse the older version as put back); the
// attacker needs one win in 30 rounds.
func TestKeyattack8TaskClaimedTwiceThroughAnAnsweredRead(t *testing.T) {
	escape8(t, "kvcas takes the first answer to its message get, which any subscriber may give")
	srv := natstest.Start(t)
	a, b := machine(t), machine(t)
	ctx := t.Context()
	if _, err := a.Create(ctx, CreateSpec{Name: "t", NATS: srv.URL()}); err != nil {
		t.Fatal(err)
	}
	leadPub, err := a.LeadKey("t")
	if err != nil {
		t.Fatal(err)
	}
	join := func(s *Store) {
		t.Helper()
		if _, err := s.Join(ctx, "t", srv.URL()); err != nil {
			t.Fatal(err)
		}
		if err := s.PinKey("t", LeadName, leadPub); err != nil {
			t.Fatal(err)
		}
	}
	join(b)
	for _, m := range []string{"m1", "m2"} {
		if _, err := a.AddMember(ctx, "t", MemberSpec{Name: m}); err != nil {
			t.Fatal(err)
		}
	}
	admit(t, a, b, "m1")
	la, err := a.Tasks("t")
	if err != nil {
		t.Fatal(err)
	}
	task, err := la.Create(ctx, tasklist.TaskSpec{Subject: "build"})
	if err != nil {
		t.Fatal(err)
	}

	atk, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(atk.Close)
	ajs, err := jetstream.New(atk)
	if err != nil {
		t.Fatal(err)
	}
	kvStream := "KV_" + StateBucket("t")
	st, err := ajs.Stream(ctx, kvStream)
	if err != nil {
		t.Fatal(err)
	}
	subj := "$KV." + StateBucket("t") + "." + tasklist.KVKey
	before, err := st.GetLastMsgForSubject(ctx, subj)
	if err != nil {
		t.Fatal(err)
	}
	lb, err := b.Tasks("t")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lb.Claim(ctx, task.ID, "m1"); err != nil {
		t.Fatal(err)
	}
	now, err := st.GetLastMsgForSubject(ctx, subj)
	if err != nil {
		t.Fatal(err)
	}
	answer, err := json.Marshal(map[string]any{"type": "io.nats.jetstream.api.v1.stream_msg_get_response",
		"message": map[string]any{"subject": subj, "seq": now.Sequence, "data": before.Data, "time": now.Time}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := atk.Subscribe("$JS.API.STREAM.MSG.GET."+kvStream, func(req *nats.Msg) {
		if strings.Contains(string(req.Data), subj) {
			_ = atk.Publish(req.Reply, answer)
		}
	}); err != nil {
		t.Fatal(err)
	}
	if err := atk.Flush(); err != nil {
		t.Fatal(err)
	}

	for round := range 30 {
		c := machine(t)
		join(c)
		admit(t, a, c, "m2")
		lc, err := c.Tasks("t")
		if err != nil {
			t.Fatal(err)
		}
		_, err = lc.Claim(ctx, task.ID, "m2")
		if errors.Is(err, tasklist.ErrClaimed) || err != nil {
			t.Logf("round %d: %v", round, err)
			continue
		}
		got, _ := la.Get(ctx, task.ID)
		t.Fatalf("%s", fmt.Sprintf("task %s claimed twice: m1 on machine b, then m2 on a fresh machine in round %d; the lead now reads owner %q", task.ID, round, got.Owner))
	}
}

// TestKeyattack8LiveMemberHeardNoMoreAfterOneAnsweredRead (idea 18): the
// lead's board reads carl's new entries one JSON API request each
// (kvnext.go, next_by_subj), and the first answer counts. The attacker
// answers those requests for carl with junk at sequence 1,000,000 while
// carl beats and the lead reads; one won answer is enough: the board
// counts carl's key read up to 1,000,000, and from then on takes every
// real revision for one it has read (done, no scan). The attacker
// stops; carl, alive, beats on, and the lead keeps the status it saw
// before the attack, ageing: past DeadAfter, a live member seen dead.
// Held: the answer at 1,000,000 is won (seen in a run with logging) and
// the board still dates carl's beats after the attack as heard (an open
// board hears the bucket's subjects, kvheard.go), so it runs ungated.
func TestKeyattack8LiveMemberHeardNoMoreAfterOneAnsweredRead(t *testing.T) {
	srv := natstest.Start(t).URL()
	_, _, carlBoard, board := leadAndCarl(t, srv, make(reporter, 1024))
	beat := func() {
		t.Helper()
		if err := carlBoard.Put(t.Context(), "carl", statusOf("carl", "working")); err != nil {
			t.Fatal(err)
		}
	}
	beat()
	readSeen(t, board, "carl")

	atk, err := nats.Connect(srv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(atk.Close)
	stream := "KV_COHORT_TEAM_t_STATUS"
	subj := "$KV.COHORT_TEAM_t_STATUS.carl"
	sub, err := atk.Subscribe("$JS.API.STREAM.MSG.GET."+stream, func(req *nats.Msg) {
		if !strings.Contains(string(req.Data), "next_by_subj") || !strings.Contains(string(req.Data), subj) {
			return
		}
		answer, _ := json.Marshal(map[string]any{"type": "io.nats.jetstream.api.v1.stream_msg_get_response",
			"message": map[string]any{"subject": subj, "seq": 1_000_000, "data": []byte("junk"), "time": time.Now().UTC()}})
		_ = atk.Publish(req.Reply, answer)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := atk.Flush(); err != nil {
		t.Fatal(err)
	}
	for range 20 {
		beat()
		_, _, _, _ = board.Get(t.Context(), "carl")
	}
	if err := sub.Unsubscribe(); err != nil {
		t.Fatal(err)
	}
	if err := atk.Flush(); err != nil {
		t.Fatal(err)
	}
	ended := time.Now()
	time.Sleep(50 * time.Millisecond)
	for range 5 {
		beat()
		time.Sleep(20 * time.Millisecond)
	}
	if state, seen := readSeen(t, board, "carl"); seen.Before(ended) {
		t.Fatalf("carl beat 5 times after the attack ended, and the lead still reads %s seen %v before the attack ended: his heartbeat ages while he beats", state, ended.Sub(seen).Round(time.Millisecond))
	}
}
