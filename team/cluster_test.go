package team

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/natstest"
	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/tasklist"
)

// clusterTasks is how many tasks the cluster team shares out.
const clusterTasks = 24

// TestClusterTeamSurvivesANodeLoss: a lead and two teammates, each with
// a connection of its own to a three-node JetStream cluster (streams and
// buckets R3), work through a shared task list and report each task done
// by message. A third of the way in, the node leading the team's mailbox
// stream is killed. The team finishes: every task completed by exactly
// one teammate, every report the teammates sent delivered to the lead
// exactly once, and the lead's messages reach both teammates.
func TestClusterTeamSurvivesANodeLoss(t *testing.T) {
	start := time.Now()
	c := natstest.StartCluster(t, 3)
	root := t.TempDir()
	store := func() *Store {
		s, err := NewStore(StoreConfig{Root: root, Now: time.Now, Mailbox: quietMailbox(), Replicas: 3})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s
	}
	lead := store()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	if _, err := lead.Create(ctx, CreateSpec{Name: "t", NATS: c.URL()}); err != nil {
		t.Fatal(err)
	}
	mates := []string{"alice", "bob"}
	for _, m := range mates {
		if _, err := lead.AddMember(ctx, "t", MemberSpec{Name: m}); err != nil {
			t.Fatal(err)
		}
	}
	list, err := lead.Tasks("t")
	if err != nil {
		t.Fatal(err)
	}
	for i := range clusterTasks {
		if _, err := list.Create(ctx, tasklist.TaskSpec{Subject: fmt.Sprint("task ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	lmb, err := lead.Mailbox("t")
	if err != nil {
		t.Fatal(err)
	}
	leadIn, err := lmb.OpenInbox(ctx, LeadName)
	if err != nil {
		t.Fatal(err)
	}
	defer leadIn.Close()

	sent := make(map[string][]string) // teammate → ids it sent, once each Append returned
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, name := range mates {
		s := store()
		wg.Go(func() {
			ids, err := runMate(ctx, s, name)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				cancel()
			}
			mu.Lock()
			sent[name] = ids
			mu.Unlock()
		})
	}
	tell := func(text string) {
		for _, m := range mates {
			if err := retry(ctx, func(ctx context.Context) error {
				_, err := lmb.Append(ctx, mailbox.Message{ID: text + "-" + m, From: LeadName, To: m, Text: text})
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	tell("start")

	got := map[string]mailbox.Message{} // id → message, as the lead recorded it
	done := map[string]string{}         // task → teammate that reported it
	killed := -1
	for len(done) < clusterTasks {
		msgs, err := leadIn.Receive(ctx)
		if err != nil {
			n, perr := lmb.Pending(context.WithoutCancel(ctx), LeadName)
			t.Fatalf("lead, after %d reports: %v (the stream holds %d unacknowledged for the lead: %v)", len(done), err, n, perr)
		}
		for _, m := range msgs {
			if _, dup := got[m.ID]; dup {
				t.Errorf("the lead got %s twice", m.ID)
			}
			got[m.ID] = m
			task, _ := strings.CutPrefix(m.Text, "done #")
			if prev, ok := done[task]; ok {
				t.Errorf("task #%s reported by %s and %s", task, prev, m.From)
			}
			done[task] = m.From
		}
		if err := retry(ctx, func(ctx context.Context) error { return leadIn.Ack(ctx, ids(msgs)...) }); err != nil {
			t.Fatal(err)
		}
		if killed < 0 && len(done) >= clusterTasks/3 {
			killed = c.StreamLeader("COHORT_TEAM_t")
			if killed < 0 {
				killed = 0
			}
			t.Logf("killing node n%d (leads the team's mailbox stream) after %d reports", killed, len(done))
			c.Kill(killed)
		}
	}
	tell("shutdown")
	wg.Wait()
	for _, name := range mates {
		for _, id := range sent[name] {
			if _, ok := got[id]; !ok {
				t.Errorf("%s's report %s never reached the lead", name, id)
			}
		}
	}
	tasks, err := list.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		if task.Status != tasklist.StatusCompleted || task.Owner != done[task.ID] {
			t.Errorf("task #%s: %s by %q, reported by %q", task.ID, task.Status, task.Owner, done[task.ID])
		}
	}
	t.Logf("three-node cluster, %d tasks, one node killed: %v", clusterTasks, time.Since(start).Round(time.Millisecond))
}

// runMate is a teammate: it waits for the lead's start, then claims,
// completes and reports tasks until none is left, and returns on the
// lead's shutdown with the ids of the reports it sent.
func runMate(ctx context.Context, s *Store, name string) ([]string, error) {
	mb, err := s.Mailbox("t")
	if err != nil {
		return nil, err
	}
	in, err := mb.OpenInbox(ctx, name)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	list, err := s.Tasks("t")
	if err != nil {
		return nil, err
	}
	if err := awaitText(ctx, in, "start"); err != nil {
		return nil, err
	}
	var sent []string
	for {
		task, ok, err := claimNext(ctx, list, name)
		if err != nil {
			return sent, err
		}
		if !ok {
			break
		}
		st := tasklist.StatusCompleted
		if err := retry(ctx, func(ctx context.Context) error {
			_, err := list.Update(ctx, task, tasklist.Patch{Status: &st})
			return err
		}); err != nil {
			return sent, err
		}
		m := mailbox.Message{ID: mailbox.NewID(time.Now()), From: name, To: LeadName, Text: "done #" + task}
		if err := retry(ctx, func(ctx context.Context) error { _, err := mb.Append(ctx, m); return err }); err != nil {
			return sent, err
		}
		sent = append(sent, m.ID)
	}
	return sent, awaitText(ctx, in, "shutdown")
}

// claimNext claims the first pending task; ok is false when none is left.
// A claim that failed in transit may have landed: claiming again is
// "already ours".
func claimNext(ctx context.Context, list *tasklist.List, name string) (id string, ok bool, err error) {
	for {
		var tasks []tasklist.Task
		if err := retry(ctx, func(ctx context.Context) (err error) { tasks, err = list.List(ctx); return err }); err != nil {
			return "", false, err
		}
		i := slices.IndexFunc(tasks, func(t tasklist.Task) bool {
			return t.Owner == "" || t.Owner == name && t.Status != tasklist.StatusCompleted
		})
		if i < 0 {
			return "", false, nil
		}
		err := retry(ctx, func(ctx context.Context) error { _, err := list.Claim(ctx, tasks[i].ID, name); return err })
		if err == nil {
			return tasks[i].ID, true, nil
		}
		if !errors.Is(err, tasklist.ErrClaimed) && !errors.Is(err, tasklist.ErrCompleted) {
			return "", false, err
		}
	}
}

// awaitText receives until a message with text comes, acknowledging
// everything.
func awaitText(ctx context.Context, in mailbox.Inbox, text string) error {
	for {
		msgs, err := in.Receive(ctx)
		if err != nil {
			return fmt.Errorf("waiting for %q: %w", text, err)
		}
		if err := retry(ctx, func(ctx context.Context) error { return in.Ack(ctx, ids(msgs)...) }); err != nil {
			return err
		}
		if slices.ContainsFunc(msgs, func(m mailbox.Message) bool { return m.Text == text }) {
			return nil
		}
	}
}

// retry repeats op while it fails with an error of the cluster in
// failover (not one of the task list's own answers), until ctx ends. Each
// attempt has 5 s: a request sent as its node died is never answered.
func retry(ctx context.Context, op func(ctx context.Context) error) error {
	for {
		actx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := op(actx)
		cancel()
		if err == nil || errors.Is(err, tasklist.ErrClaimed) || errors.Is(err, tasklist.ErrCompleted) ||
			errors.Is(err, tasklist.ErrInvalidTask) || ctx.Err() != nil {
			return err
		}
		t := time.NewTimer(100 * time.Millisecond)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return err
		}
	}
}

func ids(msgs []mailbox.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.ID
	}
	return out
}
