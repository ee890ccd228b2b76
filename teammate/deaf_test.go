package teammate

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/internal/natstest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/team"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// endlessTeammate starts carl, a teammate on "another machine" (a Store
// of its own) of a lead whose team is on the NATS server at url, with the
// Config change sets, and returns once carl is in a turn that lasts until
// it is cancelled; done gets Run's result.
func endlessTeammate(t *testing.T, url string, change func(*Config)) (*fixture, *Loop, <-chan error) {
	t.Helper()
	inTurn := make(chan struct{})
	var once sync.Once
	policy := func(q *fakeapi.Request) fakeapi.Reply {
		if strings.Contains(q.LastUserText(), "endless job") {
			once.Do(func() { close(inTurn) })
			<-q.Context().Done()
		}
		return fakeapi.TextReply("ok")
	}
	f := newFixtureLead(t, policy, func(c *LeadConfig) { c.NATS = url })
	m, err := f.store.AddMember(t.Context(), "t", team.MemberSpec{Name: "carl", AgentType: "general-purpose", Prompt: "endless job"})
	if err != nil {
		t.Fatal(err)
	}
	store, err := team.NewStore(team.StoreConfig{Root: f.store.Root()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	gp, _ := f.rt.Catalog().Get(agentdef.GeneralPurpose)
	cfg := Config{Team: "t", Member: m, Store: store, Runtime: f.rt, Def: gp,
		Checker: f.checker.ForChild(""), Heartbeat: 20 * time.Millisecond, LeadModel: "claude-sonnet-5-5",
		Getenv: func(string) string { return "" }}
	change(&cfg)
	tm, err := Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- tm.Run(t.Context()) }()
	<-inTurn
	return f, tm, done
}

// TestATeammateWhoseInboxGoesDeafEnds: mid-turn, someone with the
// server's API shortens the team stream's duplicate window to 1 s (found
// by the inbox's check, every 5 s). The teammate's inbox refuses it and gives up (jsmail,
// mailbox.ErrDeaf); nothing could reach the teammate any more (not a
// shutdown request), so its Run ends with that error rather than working
// on deaf.
func TestATeammateWhoseInboxGoesDeafEnds(t *testing.T) {
	srv := natstest.Start(t)
	_, _, done := endlessTeammate(t, srv.URL(), func(*Config) {})
	nc, err := nats.Connect(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := js.Stream(t.Context(), "COHORT_TEAM_t")
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.CachedInfo().Config
	cfg.Duplicates = time.Second
	if _, err := js.UpdateStream(t.Context(), cfg); err != nil {
		t.Fatal(err)
	}
	err = waitErr(t, done)
	if !errors.Is(err, mailbox.ErrDeaf) || !strings.Contains(err.Error(), "duplicates 1s") {
		t.Fatalf("Run: %v; want mailbox.ErrDeaf naming the shortened window", err)
	}
}
