package team

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/sessionsock"
)

var requestIDRe = regexp.MustCompile(`request_id: \\?"([0-9a-f]+)\\?"`)

// TestMixedTeamOverTmux is the team end-to-end test: a lead with one
// in-process teammate (alice) and one teammate in its own process in a tmux
// pane (bob, who must get his plan approved): a broadcast, messages both
// ways, plan approval across processes, a uds: message to another session,
// and shutdown, with the team file checked along the way.
func TestMixedTeamOverTmux(t *testing.T) {
	clitest.NeedTmux(t)
	t.Parallel()
	bin := clitest.BuildBinary(t)
	var mu sync.Mutex
	var snapshots []map[string]bool
	planAnswered, udsSent := false, false
	var h *clitest.Harness
	got := make(chan mailbox.Message, 4)
	var other *sessionsock.Listener // another Cohort session on this machine (below)

	policy := func(r *fakeapi.Request) fakeapi.Reply {
		first, turn, last := r.FirstUserText(), r.Turn(), r.LastUserText()
		switch {
		case strings.Contains(first, "alice-job"):
			switch turn {
			case 0:
				// A broadcast reaches the members of its moment; alice and
				// bob are spawned in parallel, so wait until bob has joined.
				if !waitMember(r.Context(), h, "mix", "bob") {
					return fakeapi.TextReply("bob never joined")
				}
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("SendMessage", map[string]any{"to": "*", "message": "alice broadcast: hello team"})}}
			case 1:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("SendMessage", map[string]any{"to": "team-lead", "message": "alice: done"})}}
			}
			return fakeapi.TextReply("alice idle")
		case strings.Contains(first, "bob-job"):
			if turn == 0 {
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("ExitPlanMode", map[string]any{"plan": "bob plan: read the notes, change nothing"})}}
			}
			if strings.Contains(r.LastToolResultText(), "approved your plan") {
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("SendMessage", map[string]any{"to": "team-lead", "message": "bob: done, plan approved"})}}
			}
			return fakeapi.TextReply("bob idle")
		case strings.Contains(first, "lead-start"):
			mu.Lock()
			defer mu.Unlock()
			switch {
			case turn == 0:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("TeamCreate", map[string]any{"team_name": "mix"})}}
			case turn == 1:
				return fakeapi.Reply{Content: []fakeapi.Block{
					clitest.Use("Agent", map[string]any{"description": "alice", "team_name": "mix", "name": "alice", "prompt": "alice-job: say hello"}),
					clitest.Use("Agent", map[string]any{"description": "bob", "team_name": "mix", "name": "bob", "prompt": "bob-job: plan first", "mode": "plan"}),
				}}
			case !planAnswered && strings.Contains(last, "asks you to approve its plan"):
				m := requestIDRe.FindStringSubmatch(last)
				if m == nil {
					return fakeapi.TextReply("no request id in: " + last)
				}
				planAnswered = true
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("SendMessage", map[string]any{"to": "bob",
					"type": "plan_approval_response", "request_id": m[1], "approve": true, "message": "go ahead"})}}
			case !udsSent && strings.Contains(r.Messages[len(r.Messages)-1].Content[0].Text+last, "bob: done"):
				udsSent = true
				snapshots = append(snapshots, clitest.MemberActive(h.TeamConfig("mix")))
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("SendMessage", map[string]any{"to": "uds:" + other.Path(), "message": "hello from the lead"})}}
			}
			return fakeapi.TextReply("noted")
		}
		return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "no rule"}}
	}
	h = clitest.New(t, policy)
	h.ShortHome()
	h.Vars["COHORT_TEAMMATE_BIN"] = bin
	// The other session shares COHORT_HOME, so its socket is where every
	// session's is: the only sockets SendMessage reaches without asking.
	var err error
	other, err = sessionsock.Listen(t.Context(), sessionsock.Config{Dir: filepath.Join(h.Vars["COHORT_HOME"], "sessions"),
		SessionID: "other", Handler: func(_ context.Context, m mailbox.Message) error { got <- m; return nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	out, errOut, code := h.Run("-p", "lead-start: run a mixed team", "--output-format", "json",
		"--teammate-mode", "in-process", "--teammate-backend", "bob=tmux")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	// The other session got the lead's uds: message.
	select {
	case m := <-got:
		// Signed with the lead session's own socket, which the other
		// session can answer (it has no "team-lead").
		if m.Text != "hello from the lead" || !strings.HasPrefix(m.From, "uds:"+filepath.Join(h.Vars["COHORT_HOME"], "sessions")+"/") {
			t.Fatalf("uds message = %+v", m)
		}
	default:
		t.Fatal("the uds: message never arrived")
	}
	// Every message reached bob's model exactly once, across processes.
	var bobLast *fakeapi.Request
	var leadSaw strings.Builder
	for _, rec := range h.Srv.Requests() {
		if rec.Request == nil {
			continue
		}
		if strings.Contains(rec.Request.FirstUserText(), "bob-job") {
			bobLast = rec.Request
		}
		if strings.Contains(rec.Request.FirstUserText(), "lead-start") {
			leadSaw.Write(rec.Body)
		}
	}
	if bobLast == nil {
		t.Fatal("bob never called the model")
	}
	body, _ := json.Marshal(bobLast.Messages)
	if n := strings.Count(string(body), "alice broadcast: hello team"); n != 1 {
		t.Fatalf("bob saw alice's broadcast %d times, want exactly once", n)
	}
	for _, want := range []string{"alice: done", "bob: done, plan approved", "asks you to approve its plan"} {
		if !strings.Contains(leadSaw.String(), want) {
			t.Fatalf("the lead never saw %q", want)
		}
	}
	if len(snapshots) != 1 || !snapshots[0]["alice"] || !snapshots[0]["bob"] {
		t.Fatalf("mid-run the team file should show alice and bob active: %v", snapshots)
	}
	cfg := h.TeamConfig("mix")
	active := clitest.MemberActive(cfg)
	if active["alice"] || active["bob"] {
		t.Fatalf("teammates still active after shutdown: %v", active)
	}
	for _, m := range cfg["members"].([]any) {
		mm := m.(map[string]any)
		if mm["name"] == "bob" && (mm["backendType"] != "tmux" || mm["tmuxPaneId"] == "") {
			t.Fatalf("bob should be recorded as a tmux teammate with a pane: %v", mm)
		}
	}
	st := readStatusFile(t, h, "mix", "bob")
	if st.PID == 0 || clitest.ProcessRunning(st.PID) {
		t.Fatalf("bob's process %d should have exited (status %+v)", st.PID, st)
	}
	// bob read his configuration (the lead's key in it) and removed it.
	if left, _ := filepath.Glob(filepath.Join(h.Vars["COHORT_HOME"], "tmux", "teammate-*.json")); len(left) > 0 {
		t.Errorf("teammates' configuration files left behind: %v", left)
	}
	checkTeamSpend(t, h, out, "bob-job")
}

// checkTeamSpend is issue 17 item 5: the result counts what every agent
// spent, a teammate in its own process too. The per-agent list names the
// lead and each teammate, the tmux teammate's usage is exactly what the
// API reported to its requests, and the agents' costs add up to the total.
func checkTeamSpend(t *testing.T, h *clitest.Harness, out, tmuxPrompt string) {
	t.Helper()
	var res clitest.ResultLine
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("result: %v\n%s", err, out)
	}
	var served fakeapi.Usage
	for _, rec := range h.Srv.Requests() {
		if rec.Request != nil && strings.Contains(rec.Request.FirstUserText(), tmuxPrompt) {
			served.InputTokens += rec.Usage.InputTokens
			served.OutputTokens += rec.Usage.OutputTokens
			served.CacheReadInputTokens += rec.Usage.CacheReadInputTokens
			served.CacheCreationInputTokens += rec.Usage.CacheCreationInputTokens
		}
	}
	kinds := map[string]int{}
	sum := 0.0
	var bob *struct{ in, out, read, made int }
	for _, a := range res.Agents {
		kinds[a.Kind]++
		sum += a.CostUSD
		// Local models are free unless priced: only Claude's cost is known.
		priced := os.Getenv(clitest.ProviderEnv) == ""
		if (priced && a.CostUSD <= 0) || a.Usage.OutputTokens <= 0 || a.DurationMs <= 0 || a.Model == "" {
			t.Errorf("agent %s (%s): cost %v, output tokens %d, duration %d ms, model %q; each should be set", a.ID, a.Kind, a.CostUSD, a.Usage.OutputTokens, a.DurationMs, a.Model)
		}
		if a.Name == "bob" {
			bob = &struct{ in, out, read, made int }{int(a.Usage.InputTokens), int(a.Usage.OutputTokens), int(a.Usage.CacheReadInputTokens), int(a.Usage.CacheCreationInputTokens)}
		}
	}
	if kinds["lead"] != 1 || kinds["teammate"] != 2 {
		t.Fatalf("per-agent list kinds %v, want one lead and two teammates\n%s", kinds, out)
	}
	if bob == nil {
		t.Fatalf("the per-agent list lacks the tmux teammate\n%s", out)
	}
	if served.InputTokens+served.CacheReadInputTokens+served.CacheCreationInputTokens == 0 || bob.in != served.InputTokens || bob.out != served.OutputTokens ||
		bob.read != served.CacheReadInputTokens || bob.made != served.CacheCreationInputTokens {
		t.Errorf("the tmux teammate's usage %+v, want what the API served it %+v", *bob, served)
	}
	if math.Abs(sum-res.TotalCostUSD) > 1e-9 {
		t.Errorf("the agents' costs add up to %v, the total says %v", sum, res.TotalCostUSD)
	}
	var modelSum float64
	for _, m := range res.ModelUsage {
		modelSum += m.CostUSD
	}
	if math.Abs(modelSum-res.TotalCostUSD) > 1e-9 {
		t.Errorf("modelUsage adds up to %v, the total says %v", modelSum, res.TotalCostUSD)
	}
}

// waitMember waits until the team file lists name, or ctx ends.
func waitMember(ctx context.Context, h *clitest.Harness, teamName, name string) bool {
	path := filepath.Join(h.Vars["COHORT_HOME"], "teams", teamName, "config.json")
	for {
		var cfg struct {
			Members []struct {
				Name string `json:"name"`
			} `json:"members"`
		}
		if data, err := os.ReadFile(path); err == nil && json.Unmarshal(data, &cfg) == nil {
			for _, m := range cfg.Members {
				if m.Name == name {
					return true
				}
			}
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(10 * time.Millisecond):
		}
	}
}

type statusFile struct {
	State string `json:"state"`
	PID   int    `json:"pid"`
}

func readStatusFile(t *testing.T, h *clitest.Harness, teamName, name string) statusFile {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(h.Vars["COHORT_HOME"], "teams", teamName, "status", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var st statusFile
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestKilledTeammateIsReportedDead SIGKILLs a teammate process in the middle
// of its turn: the lead must be told it is dead, the team file must mark it
// inactive, and the run must still end.
func TestKilledTeammateIsReportedDead(t *testing.T) {
	clitest.NeedTmux(t)
	t.Parallel()
	bin := clitest.BuildBinary(t)
	var h *clitest.Harness
	var mu sync.Mutex
	var leadSawDead string
	killed := false
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		first, turn, last := r.FirstUserText(), r.Turn(), r.LastUserText()
		switch {
		case strings.Contains(first, "carl-job"):
			mu.Lock()
			if !killed {
				killed = true
				st := readStatusFile(t, h, "doomed", "carl")
				_ = syscall.Kill(st.PID, syscall.SIGKILL)
			}
			mu.Unlock()
			<-r.Context().Done() // the caller is gone
			return fakeapi.TextReply("unreachable")
		case strings.Contains(first, "lead-start"):
			switch {
			case turn == 0:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("TeamCreate", map[string]any{"team_name": "doomed"})}}
			case turn == 1:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Agent", map[string]any{"description": "carl",
					"team_name": "doomed", "name": "carl", "prompt": "carl-job: work for a while"})}}
			case strings.Contains(last, `state="dead"`):
				mu.Lock()
				leadSawDead = last
				mu.Unlock()
				return fakeapi.TextReply("carl is gone; stopping")
			}
			return fakeapi.TextReply("waiting")
		}
		return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "no rule"}}
	}
	h = clitest.New(t, policy)
	h.ShortHome()
	h.Vars["COHORT_TEAMMATE_BIN"] = bin
	out, errOut, code := h.Run("-p", "lead-start: a doomed team", "--output-format", "json", "--teammate-mode", "tmux")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(leadSawDead, "carl") {
		t.Fatalf("the lead was never told that carl died")
	}
	if clitest.MemberActive(h.TeamConfig("doomed"))["carl"] {
		t.Fatal("carl is still active in the team file")
	}
	if st := readStatusFile(t, h, "doomed", "carl"); st.State != "dead" {
		t.Fatalf("carl's status = %q, want dead", st.State)
	}
}
