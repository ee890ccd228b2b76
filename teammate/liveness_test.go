package teammate

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/internal/natstest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/tasklist"
	"github.com/cohort-dev/cohort/team"
)

// machines is a ProcessBackend whose teammates run on "other machines":
// each in a Loop with a Store of its own, so its own NATS connection, which
// vanish drops without a word, as a machine that loses power does.
type machines struct {
	t    *testing.T
	f    *fixture
	mu   sync.Mutex
	runs map[string]*machine
}

type machine struct {
	store  *team.Store
	cancel context.CancelFunc
	done   chan error
}

func (ms *machines) Spawn(ctx context.Context, teamName string, m team.Member, _ string) (string, error) {
	store, err := team.NewStore(team.StoreConfig{Root: ms.f.store.Root()})
	if err != nil {
		return "", err
	}
	gp, _ := ms.f.rt.Catalog().Get(agentdef.GeneralPurpose)
	tm, err := Start(ctx, Config{Team: teamName, Member: m, Store: store, Runtime: ms.f.rt, Def: gp,
		Checker: ms.f.checker.ForChild(""), Heartbeat: 20 * time.Millisecond, LeadModel: "claude-sonnet-5-5",
		Getenv: func(string) string { return "" }})
	if err != nil {
		store.Close()
		return "", err
	}
	rctx, cancel := context.WithCancel(context.Background())
	run := &machine{store: store, cancel: cancel, done: make(chan error, 1)}
	go func() { run.done <- tm.Run(rctx) }()
	ms.mu.Lock()
	ms.runs[m.Name] = run
	ms.mu.Unlock()
	return "machine-" + m.Name, nil
}

// Alive: a machine the lead cannot see into is alive as far as it knows;
// only its heartbeat tells.
func (ms *machines) Alive(context.Context, string) bool { return true }

func (ms *machines) Kill(_ context.Context, handle string) error {
	ms.stop(strings.TrimPrefix(handle, "machine-"))
	return nil
}

// vanish cuts member's machine off: its connection closes, so nothing it
// does reaches the team any more (no stopped status, no goodbye).
func (ms *machines) vanish(member string) {
	ms.mu.Lock()
	run := ms.runs[member]
	ms.mu.Unlock()
	run.store.Close()
}

func (ms *machines) stop(member string) {
	ms.mu.Lock()
	run := ms.runs[member]
	delete(ms.runs, member)
	ms.mu.Unlock()
	if run == nil {
		return
	}
	run.cancel()
	select {
	case <-run.done:
	case <-time.After(30 * time.Second):
		ms.t.Error("the teammate's loop did not end")
	}
	run.store.Close()
}

func (ms *machines) stopAll() {
	ms.mu.Lock()
	var names []string
	for n := range ms.runs {
		names = append(names, n)
	}
	ms.mu.Unlock()
	for _, n := range names {
		ms.stop(n)
	}
}

// TestATeammateWhoseMachineVanishesIsReportedAndItsTaskReleased is issue
// 42's liveness across machines, on a team whose file names a NATS server:
// a teammate on another machine claims a task and, mid-task, its machine
// vanishes. The lead, seeing no heartbeat on the team's status board for
// DeadAfter (short here; 10 s by default), tells its model the teammate is
// dead and which task it released, and the task can be claimed again.
func TestATeammateWhoseMachineVanishesIsReportedAndItsTaskReleased(t *testing.T) {
	srv := natstest.Start(t)
	inTurn := make(chan struct{})
	var once sync.Once
	policy := func(q *fakeapi.Request) fakeapi.Reply {
		if strings.Contains(q.LastUserText(), "long job") {
			once.Do(func() { close(inTurn) })
			<-q.Context().Done() // mid-task until its machine goes
		}
		return fakeapi.TextReply("ok")
	}
	ms := &machines{t: t, runs: map[string]*machine{}}
	dead := make(chan Event, 1)
	f := newFixtureLead(t, policy, func(c *LeadConfig) {
		c.NATS, c.Backend, c.Process = srv.URL(), BackendTmux, ms
		c.Heartbeat, c.DeadAfter = 20*time.Millisecond, 500*time.Millisecond
		c.OnEvent = func(ev Event) {
			if ev.Kind == EventDead {
				dead <- ev
			}
		}
	})
	ms.f = f
	t.Cleanup(ms.stopAll) // before the lead's Close and the store's
	if tm, err := f.store.Load("t"); err != nil || tm.Config.NATS != srv.URL() {
		t.Fatalf("the team is not on NATS: %+v, %v", tm, err)
	}
	list, err := f.store.Tasks("t")
	if err != nil {
		t.Fatal(err)
	}
	task, err := list.Create(t.Context(), tasklist.TaskSpec{Subject: "port the parser", Description: "long job"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := f.store.AddMember(t.Context(), "t", team.MemberSpec{Name: "carl", AgentType: "general-purpose", Prompt: "long job"})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.l.spawnProcess(t.Context(), "t", m, nil, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := list.Claim(t.Context(), task.ID, "carl"); err != nil { // what carl's TaskUpdate does
		t.Fatal(err)
	}
	<-inTurn
	if st, ok, err := statusIn(f.store, "t", "carl"); !ok || err != nil || st.State != StateBusy {
		t.Fatalf("carl's status on the board: %+v, %v, %v; want busy", st, ok, err)
	}
	vanished := time.Now()
	ms.vanish("carl")
	select {
	case ev := <-dead:
		if ev.From != "carl" {
			t.Fatalf("dead: %+v, want carl", ev)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the lead was not told within 30 s that carl's machine vanished")
	}
	t.Logf("the lead knew carl was dead %s after its machine vanished (DeadAfter 500ms)", time.Since(vanished).Round(time.Millisecond))
	var told string
	for _, it := range f.leadAgent.Queue().Take() {
		if strings.Contains(it.Text, `state="dead"`) {
			told = it.Text
		}
	}
	if !strings.Contains(told, "no heartbeat") || !strings.Contains(told, "#"+task.ID) {
		t.Errorf("the lead's notice does not say why or which task was released: %s", told)
	}
	got, err := list.Get(t.Context(), task.ID)
	if err != nil || got.Owner != "" || got.Status != tasklist.StatusPending {
		t.Fatalf("task after carl died: %+v, %v; want unowned and pending", got, err)
	}
	if _, err := list.Claim(t.Context(), task.ID, "dora"); err != nil {
		t.Fatalf("the released task cannot be claimed again: %v", err)
	}
	if mem, _ := f.store.Member("t", "carl"); mem.IsActive {
		t.Error("carl is still active in the team file")
	}
	dir, _ := f.store.Dir("t")
	if _, ok, _ := readStatus(team.FileStatuses(dir), "carl"); ok {
		t.Error("carl's status went to a file: on NATS it belongs on the team's board")
	}
}

// TestATeammateWhoseLeadVanishesStops: the lead's machine vanishes (its
// connection drops, so its heartbeat stops); a teammate on another machine
// cannot see the lead lock there, and goes by the lead's heartbeat on the
// board: after LeadDeadAfter (short here; 10 s by default) and the grace,
// it stops its turn and exits with ErrLeadGone.
func TestATeammateWhoseLeadVanishesStops(t *testing.T) {
	srv := natstest.Start(t)
	f, tm, done := endlessTeammate(t, srv.URL(), func(c *Config) {
		c.LeadDeadAfter, c.LeadGoneGrace = 300*time.Millisecond, 50*time.Millisecond
	})
	f.store.Close() // the lead's machine is gone: no more heartbeats
	if err := waitErr(t, done); !errors.Is(err, ErrLeadGone) {
		t.Fatalf("Run: %v; want ErrLeadGone", err)
	}
	if !strings.Contains(tm.lead.reason, "no heartbeat from the lead") {
		t.Errorf("reason %q does not say the lead's heartbeat stopped", tm.lead.reason)
	}
}
