package teammate

import (
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/flags"
	"github.com/cohort-dev/cohort/llm/claude"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/settings"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/team"
	"github.com/cohort-dev/cohort/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixture is a lead's swarm with a team "t" and two members registered in
// the team file (no teammate runs: these tests drive the routing).
type fixture struct {
	l     *Lead
	store *team.Store
	mbox  mailbox.Transport
	lead  tool.Env
	// sendTool is the session's SendMessage.
	sendTool  tool.Tool
	rt        *crew.Crew
	checker   *permission.Checker
	fs        *flags.Set
	leadAgent *crew.Agent
	reg       *task.Registry
	// cohortHome is the checker's $COHORT_HOME.
	cohortHome string
}

func newFixture(t *testing.T) *fixture { return newFixtureWith(t, nil, "alice", "bob") }

// newFixtureWith is newFixture with a model policy, for tests that run
// teammates, and the members to add to the team file.
func newFixtureWith(t *testing.T, policy fakeapi.Policy, members ...string) *fixture {
	t.Helper()
	return newFixtureLead(t, policy, nil, members...)
}

// newFixtureLead is newFixtureWith with the lead's configuration adjusted
// by adjust (nil: as it is).
func newFixtureLead(t *testing.T, policy fakeapi.Policy, adjust func(*LeadConfig), members ...string) *fixture {
	t.Helper()
	home := t.TempDir()
	srv := fakeapi.New(fakeapi.Config{Policy: policy})
	t.Cleanup(srv.Close)
	model, err := claude.New(claude.Config{APIKey: "k", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := task.NewRegistry(task.Config{Home: home, SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = reg.Close(context.Background()) })
	env := settings.Env{Home: home, CohortHome: filepath.Join(home, ".cohort"), Cwd: home}
	checker, err := permission.New(permission.Config{Env: env})
	if err != nil {
		t.Fatal(err)
	}
	store, err := team.NewStore(team.StoreConfig{Root: filepath.Join(home, "teams")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close) // after the lead's Close (cleanups run last first)
	fs, _ := flags.Resolve(flags.Config{})
	lc := LeadConfig{Store: store, Tasks: reg, Checker: checker, SessionID: "s", LeadModel: "claude-sonnet-5-5"}
	if adjust != nil {
		adjust(&lc)
	}
	l, err := NewLead(lc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	rt, err := crew.New(crew.Config{Model: model, Catalog: agentdef.NewCatalog(agentdef.BuiltIns(fs)), Flags: fs,
		Tasks: reg, Cwd: home, Tools: func(rt *crew.Crew) []tool.Tool {
			return append([]tool.Tool{crew.NewAgentTool(crew.AgentToolConfig{Runtime: rt, Teammates: l})}, l.Tools(rt)...)
		}})
	if err != nil {
		t.Fatal(err)
	}
	lead, err := rt.NewLead(t.Context(), crew.LeadConfig{Model: "claude-sonnet-5-5"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(lead.Close)
	if _, err := l.CreateTeam(t.Context(), lead, "t", "test"); err != nil {
		t.Fatal(err)
	}
	for _, n := range members {
		if _, err := store.AddMember(t.Context(), "t", team.MemberSpec{Name: n, AgentType: "general-purpose"}); err != nil {
			t.Fatal(err)
		}
	}
	return &fixture{l: l, store: store, mbox: l.Mailbox(), lead: tool.Env{Caller: lead.Info()}, sendTool: rt.Tools()[1],
		rt: rt, checker: checker, fs: fs, leadAgent: lead, reg: reg, cohortHome: env.CohortHome}
}

func (f *fixture) send(t *testing.T, env tool.Env, in map[string]any) tool.Result {
	t.Helper()
	raw, _ := json.Marshal(in)
	if err := tool.ValidateInput(f.sendTool.Def().InputSchema, raw); err != nil {
		t.Fatalf("input rejected by the schema: %v", err)
	}
	res, err := f.sendTool.Run(t.Context(), &env, raw)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestSendMessageRefusals(t *testing.T) {
	f := newFixture(t)
	alice := tool.Env{Caller: tool.Caller{ID: "alice@t", Name: "alice", Team: "t", Kind: tool.KindTeammate}}
	yes := true
	cases := []struct {
		name string
		env  tool.Env
		in   map[string]any
		want string
	}{
		{"unknown recipient lists members", f.lead, map[string]any{"to": "zed", "message": "hi"}, "Members: alice, bob, team-lead"},
		{"to self", alice, map[string]any{"to": "alice", "message": "hi"}, "yourself"},
		{"a teammate cannot answer a plan", alice, map[string]any{"to": "bob", "message": "ok", "type": "plan_approval_response", "request_id": "r1", "approve": yes}, "Only the team lead"},
		{"the lead does not answer shutdowns", f.lead, map[string]any{"to": "bob", "message": "ok", "type": "shutdown_response", "request_id": "r1", "approve": yes}, "teammates do"},
		{"protocol answer needs its fields", f.lead, map[string]any{"to": "bob", "message": "ok", "type": "plan_approval_response"}, "request_id and approve"},
		{"bridge is not configured", f.lead, map[string]any{"to": "bridge:abc", "message": "hi"}, "NATS"},
		{"uds to nobody", approved(f.lead), map[string]any{"to": "uds:/nonexistent/x.sock", "message": "hi"}, "Could not deliver"},
		{"uds to no session, unapproved", f.lead, map[string]any{"to": "uds:/nonexistent/x.sock", "message": "hi"}, "not the socket of a Cohort session"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := f.send(t, tc.env, tc.in)
			if !res.IsError || !strings.Contains(res.TextOf(), tc.want) {
				t.Fatalf("result = %q (error %v), want an error containing %q", res.TextOf(), res.IsError, tc.want)
			}
		})
	}
	// Nothing was written to anyone's inbox.
	for _, n := range []string{"alice", "bob"} {
		if p, err := f.mbox.Pending(t.Context(), n); err != nil || p != 0 {
			t.Fatalf("%s has %d pending messages (%v)", n, p, err)
		}
	}
}

func approved(env tool.Env) tool.Env {
	env.Approved = true
	return env
}

// TestSendMessageForeignSocketNeedsApproval: below the permission check,
// the tool connects to a socket that is not a Cohort session's only for a
// call a person or an allow rule approved, whatever the mode said.
func TestSendMessageForeignSocketNeedsApproval(t *testing.T) {
	f := newFixture(t)
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	conns := make(chan struct{}, 4)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns <- struct{}{}
			c.Close()
		}
	}()
	res := f.send(t, f.lead, map[string]any{"to": "uds:" + sock, "message": "new-window 'touch pwned'"})
	if !res.IsError || !strings.Contains(res.TextOf(), "not the socket of a Cohort session") {
		t.Fatalf("unapproved send = %q, want a refusal", res.TextOf())
	}
	// The approved send connects (and fails, as the peer is no session).
	if res := f.send(t, approved(f.lead), map[string]any{"to": "uds:" + sock, "message": "hi"}); !res.IsError {
		t.Fatalf("approved send to a foreign socket = %q, want an error", res.TextOf())
	}
	if n := len(conns); n != 1 {
		t.Fatalf("the socket saw %d connections, want 1 (the approved send's)", n)
	}
}

func TestSendMessageDeliversAndBroadcasts(t *testing.T) {
	f := newFixture(t)
	alice := tool.Env{Caller: tool.Caller{ID: "alice@t", Name: "alice", Team: "t", Kind: tool.KindTeammate}}
	if res := f.send(t, alice, map[string]any{"to": "bob", "message": "hello bob", "summary": "hi"}); res.IsError {
		t.Fatal(res.TextOf())
	}
	if res := f.send(t, alice, map[string]any{"to": "*", "message": "hello all"}); res.IsError || !strings.Contains(res.TextOf(), "bob") {
		t.Fatal(res.TextOf())
	}
	r, err := f.mbox.OpenInbox(t.Context(), "bob")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	msgs, err := r.Read(t.Context())
	if err != nil || len(msgs) != 2 || msgs[0].From != "alice" || msgs[0].Summary != "hi" || msgs[1].Text != "hello all" {
		t.Fatalf("bob's inbox = %+v (%v)", msgs, err)
	}
	// The broadcast also reached the lead, and not alice herself.
	if n, _ := f.mbox.Pending(t.Context(), "alice"); n != 0 {
		t.Fatalf("alice got her own broadcast")
	}
}

// TestOnlyTheLeadMayAnswer checks that a permission or plan response from
// a teammate (a spoof) is dropped by the receiving teammate.
func TestOnlyTheLeadMayAnswer(t *testing.T) {
	tm := &Loop{name: "bob", cfg: Config{Logf: func(string, ...any) {}}}
	tm.chat = newChatQueue(func([]string) {})
	waiting := tm.replies.add("req1", team.LeadName)
	spoof, _ := mailbox.NewMessage("alice", "bob", mailbox.PermissionResponse{RequestID: "req1", Decision: mailbox.DecisionAllow})
	spoof.ID = "m1"
	tm.reader = nil
	tm.dispatchWith(spoof, func(mailbox.Message) {})
	select {
	case <-waiting:
		t.Fatal("a permission response from a teammate was accepted")
	default:
	}
	real, _ := mailbox.NewMessage(team.LeadName, "bob", mailbox.PermissionResponse{RequestID: "req1", Decision: mailbox.DecisionDeny})
	real.ID = "m2"
	tm.dispatchWith(real, func(mailbox.Message) {})
	select {
	case m := <-waiting:
		if m.From != team.LeadName {
			t.Fatalf("delivered %+v", m)
		}
	case <-time.After(time.Second):
		t.Fatal("the lead's response was not delivered")
	}
}

func TestLeadViewOfAPlanRequestNamesTheRequestID(t *testing.T) {
	m, _ := mailbox.NewMessage("bob", team.LeadName, mailbox.PlanApprovalRequest{RequestID: "abc123", Plan: "1. read\n2. write"})
	v := leadView(m)
	if v.Type != mailbox.TypeText || !strings.Contains(v.Text, `request_id: "abc123"`) || !strings.Contains(v.Text, "2. write") {
		t.Fatalf("lead view = %+v", v)
	}
	idle, _ := mailbox.NewMessage("bob", team.LeadName, mailbox.IdleNotification{IdleReason: "available", Summary: "all done"})
	if v := leadView(idle); !strings.Contains(v.Text, "all done") || v.Summary != "idle" {
		t.Fatalf("idle view = %+v", v)
	}
}

func TestBusyFollowsStatusAndInboxes(t *testing.T) {
	f := newFixture(t)
	dir, _ := f.store.Dir("t")
	// No status yet: members that never registered count as starting.
	if !f.l.Busy() {
		t.Fatal("members without a status should count as busy (starting)")
	}
	for _, n := range []string{"alice", "bob"} {
		p, err := newPublisher(team.FileStatuses(dir), n, time.Now)
		if err != nil {
			t.Fatal(err)
		}
		_ = p.set(StateIdle)
	}
	if f.l.Busy() {
		t.Fatal("idle members with empty inboxes are not busy")
	}
	if _, err := f.mbox.Append(t.Context(), mailbox.Message{From: "team-lead", To: "bob", Text: "more work"}); err != nil {
		t.Fatal(err)
	}
	if !f.l.Busy() {
		t.Fatal("an idle member with unread mail is busy")
	}
}

// TestTeammatesIdleTogetherWakeTheLeadOnce: two teammates send their idle
// notices before either publishes idle, so each notice finds the other
// still busy and neither wakes the lead. Once both are idle the team is
// quiet, and Busy's second look (settle) wakes the lead with both notices
// and the team line — once, however often it is asked.
func TestTeammatesIdleTogetherWakeTheLeadOnce(t *testing.T) {
	f := newFixture(t)
	dir, _ := f.store.Dir("t")
	pubs := map[string]*publisher{}
	for _, n := range []string{"alice", "bob"} {
		p, err := newPublisher(team.FileStatuses(dir), n, time.Now)
		if err != nil {
			t.Fatal(err)
		}
		_ = p.set(StateBusy)
		pubs[n] = p
	}
	for _, n := range []string{"alice", "bob"} {
		m, err := mailbox.NewMessage(n, team.LeadName, mailbox.IdleNotification{IdleReason: "available"})
		if err != nil {
			t.Fatal(err)
		}
		f.l.idle(t.Context(), m)
	}
	q := f.leadAgent.Queue()
	if q.Len() != 0 {
		t.Fatalf("a notice woke the lead while the other teammate was busy: %d items", q.Len())
	}
	for _, p := range pubs {
		_ = p.set(StateIdle)
	}
	for range 3 {
		if f.l.Busy() {
			t.Fatal("a quiet team with empty inboxes is not busy")
		}
	}
	var texts []string
	for _, it := range q.Take() {
		texts = append(texts, it.Text)
	}
	got := strings.Join(texts, "\n")
	if len(texts) != 3 || !strings.Contains(got, `from="alice"`) || !strings.Contains(got, `from="bob"`) ||
		strings.Count(got, "Every teammate is idle") != 1 {
		t.Errorf("the lead's queue after the team went quiet holds %d items, want both notices and one team line:\n%s", len(texts), got)
	}
}
