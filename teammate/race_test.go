package teammate

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/team"
)

// startLoop runs member name of team "t" as an in-process teammate.
func (f *fixture) startLoop(t *testing.T, name string) *Loop {
	t.Helper()
	m, err := f.store.Member("t", name)
	if err != nil {
		t.Fatal(err)
	}
	gp, _ := f.rt.Catalog().Get(agentdef.GeneralPurpose)
	tm, err := Start(t.Context(), Config{Team: "t", Member: m, Store: f.store, Runtime: f.rt, Def: gp,
		Checker: f.checker.ForChild(""), Heartbeat: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

// waitQuiet waits until the lead sees the team quiet.
func (f *fixture) waitQuiet(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		changed := f.l.Changed()
		if !f.l.Busy() {
			return
		}
		select {
		case <-changed:
		case <-time.After(20 * time.Millisecond): // also re-read the lead's inbox state
		}
		if time.Now().After(deadline) {
			t.Fatal("the team never went quiet")
		}
	}
}

// TestAMessageInATeammatesHandsKeepsTheTeamBusy forces the interleaving
// that lost messages: the lead's quiet check runs at the moment a
// teammate has taken a message from its inbox (acknowledging it) and not
// yet started the turn that reads it. The team must count as busy there.
func TestAMessageInATeammatesHandsKeepsTheTeamBusy(t *testing.T) {
	f := newFixtureWith(t, func(q *fakeapi.Request) fakeapi.Reply {
		if strings.Contains(q.LastUserText(), "PING") {
			return fakeapi.TextReply("pong")
		}
		return fakeapi.TextReply("ready")
	}, "alice", "bob")
	// Only bob runs: alice, who never starts, would keep the team busy.
	if _, err := f.store.SetActive(t.Context(), "t", "alice", false); err != nil {
		t.Fatal(err)
	}
	tm := f.startLoop(t, "bob")
	var quiet atomic.Bool
	var first atomic.Bool
	first.Store(true)
	taken := make(chan struct{}, 1)
	tm.testHookTaken = func() {
		if first.Swap(false) {
			return // the spawn prompt, not a message
		}
		if !f.l.Busy() {
			quiet.Store(true)
		}
		select {
		case taken <- struct{}{}:
		default:
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- tm.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	f.waitQuiet(t)
	if _, err := f.mbox.Append(t.Context(), mailbox.Message{From: team.LeadName, To: "bob", Text: "PING"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-taken:
	case <-time.After(30 * time.Second):
		t.Fatal("bob never took the message")
	}
	if quiet.Load() {
		t.Fatal("the lead saw the team quiet while bob held a message it had not read")
	}
	f.waitQuiet(t)
}

// TestTeammatesSpawnedTogetherCanMessageEachOtherAtOnce forces the
// interleaving that lost messages: alice, spawned in the same message as
// bob, sends to bob before bob's spawn has even begun. bob must already be
// in the team file, so the message waits in his inbox and he reads it.
func TestTeammatesSpawnedTogetherCanMessageEachOtherAtOnce(t *testing.T) {
	aliceSent := make(chan string, 1)
	var bobSaw atomic.Value
	bobSaw.Store("")
	f := newFixtureWith(t, func(q *fakeapi.Request) fakeapi.Reply {
		first := q.FirstUserText()
		switch {
		case strings.Contains(first, "ALICE"):
			if q.Turn() == 0 {
				return fakeapi.Reply{Content: []fakeapi.Block{fakeapi.ToolUseBlock("", "SendMessage", map[string]any{"to": "bob", "message": "PING from alice"})}}
			}
			if q.Turn() == 1 {
				select {
				case aliceSent <- q.LastToolResultText():
				default:
				}
			}
			return fakeapi.TextReply("alice done")
		case strings.Contains(first, "BOB"):
			var all strings.Builder
			for _, m := range q.Messages {
				for _, b := range m.Content {
					all.WriteString(b.Text)
				}
			}
			bobSaw.Store(all.String())
			return fakeapi.TextReply("bob done")
		case q.Turn() == 0:
			return fakeapi.Reply{Content: []fakeapi.Block{
				fakeapi.ToolUseBlock("", "Agent", map[string]any{"description": "alice", "team_name": "t", "name": "alice", "prompt": "ALICE: ping bob"}),
				fakeapi.ToolUseBlock("", "Agent", map[string]any{"description": "bob", "team_name": "t", "name": "bob", "prompt": "BOB: wait for alice"}),
			}}
		}
		return fakeapi.TextReply("lead done")
	})
	// bob's spawn does not begin until alice has sent her message.
	f.l.testHookSpawn = func(name string) {
		if name != "bob" {
			return
		}
		select {
		case r := <-aliceSent:
			aliceSent <- r
		case <-time.After(30 * time.Second):
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	if _, err := f.leadAgent.Engine().Send(ctx, []llm.Block{llm.Text("LEAD: spawn two")}, ""); err != nil {
		t.Fatal(err)
	}
	var sent string
	select {
	case sent = <-aliceSent:
	case <-ctx.Done():
		t.Fatal("alice never sent")
	}
	if !strings.Contains(sent, "Message sent to bob") {
		t.Fatalf("alice's message to bob, spawned in the same message, failed: %q", sent)
	}
	f.waitQuiet(t)
	if saw := bobSaw.Load().(string); !strings.Contains(saw, "PING from alice") {
		t.Fatalf("bob never read alice's message; his conversation: %q", saw)
	}
	stopCtx, stop := context.WithTimeout(context.Background(), 20*time.Second)
	defer stop()
	f.l.Shutdown(stopCtx, "test over")
}
