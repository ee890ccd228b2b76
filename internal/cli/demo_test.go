package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/tasklist"
	"github.com/cohort-dev/cohort/team"
)

// runDemoMain runs the CLI in-process with vars as the whole environment and
// returns what the demo reported to its probe.
func runDemoMain(t *testing.T, vars map[string]string, args ...string) (stdout, stderr string, code int, p *demoProbe) {
	t.Helper()
	p = &demoProbe{}
	ctx, cancel := context.WithTimeout(context.WithValue(t.Context(), demoProbeKey{}, p), 90*time.Second)
	defer cancel()
	var out, errb bytes.Buffer
	code = Main(ctx, Invocation{
		Args: args, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return vars[k] },
		Environ: func() []string {
			var env []string
			for k, v := range vars {
				env = append(env, k+"="+v)
			}
			return env
		},
		Getwd: func() (string, error) { return vars["HOME"], nil },
	})
	return out.String(), errb.String(), code, p
}

// demoEnv makes a HOME, COHORT_HOME and TMPDIR under a test directory.
func demoEnv(t *testing.T) map[string]string {
	t.Helper()
	root := t.TempDir()
	vars := map[string]string{"HOME": filepath.Join(root, "home"), "COHORT_HOME": filepath.Join(root, "cohort"),
		"TMPDIR": filepath.Join(root, "tmp"), "PATH": os.Getenv("PATH")}
	for _, k := range []string{"HOME", "TMPDIR"} {
		if err := os.MkdirAll(vars[k], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return vars
}

// conversations are the demo's agents, by a phrase of their first message.
var demoConversations = map[string]string{
	team.LeadName: "Review greet.go and main.go",
	"alice":       "You are on task #1",
	"bob":         "You are on task #2",
	"scout":       "Survey this project",
}

// lastRequests returns each conversation's last request: it holds the whole
// conversation the agent's model was shown.
func lastRequests(t *testing.T, recs []fakeapi.Recorded) map[string]*fakeapi.Request {
	t.Helper()
	out := map[string]*fakeapi.Request{}
	for _, rec := range recs {
		r := rec.Request
		if r == nil {
			t.Fatalf("request %d did not decode", rec.Index)
		}
		for name, marker := range demoConversations {
			if strings.Contains(r.FirstUserText(), marker) && (out[name] == nil || r.Turn() > out[name].Turn()) {
				out[name] = r
			}
		}
	}
	return out
}

// userText joins the text blocks of a request's user messages: everything
// injected into the conversation (prompts, messages, notifications).
func userText(r *fakeapi.Request) string {
	var b strings.Builder
	for _, m := range r.Messages {
		if m.Role != "user" {
			continue
		}
		for _, blk := range m.Content {
			if blk.Type == "text" {
				b.WriteString(blk.Text)
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}

// inboxMessages reads every message ever appended to the team's inboxes.
func inboxMessages(t *testing.T, cohortHome string) []mailbox.Message {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(cohortHome, "teams", demoTeam, "inboxes", "*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no inboxes: %v", err)
	}
	var out []mailbox.Message
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
			m, err := mailbox.ParseLine(line)
			if err != nil {
				t.Fatalf("%s:%d: %v", f, i+1, err)
			}
			out = append(out, m)
		}
	}
	return out
}

// TestDemo runs cohort demo end to end and checks the story's outcome on
// disk and in what each agent's model was sent, then runs it again in the
// same COHORT_HOME (the old team is cleared).
func TestDemo(t *testing.T) {
	t.Parallel()
	vars := demoEnv(t)
	out, errOut, code, p := runDemoMain(t, vars, "demo", "--keep", "--color", "never")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if p.session == nil || p.session.ScriptedModel() == nil || p.cohortHome != vars["COHORT_HOME"] {
		t.Fatalf("probe: %+v", p)
	}
	checkDemoTeam(t, p.cohortHome)
	fixed, err := os.ReadFile(filepath.Join(p.root, "project", "greet.go"))
	if err != nil || !strings.Contains(string(fixed), `return "Hello, " + name`) {
		t.Errorf("greet.go after the demo (%v):\n%s", err, fixed)
	}
	recs := p.session.ScriptedModel().Requests()
	checkDemoRules(t, recs)
	checkDemoDelivery(t, recs, inboxMessages(t, p.cohortHome))
	checkDemoNarrative(t, out)
	if strings.Contains(out, "\x1b[") {
		t.Errorf("--color never printed ANSI escapes")
	}

	// Again, in the same COHORT_HOME: the first run's team is cleared.
	out, errOut, code, p2 := runDemoMain(t, vars, "demo")
	if code != 0 {
		t.Fatalf("second run: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "removed the team an earlier demo left") {
		t.Errorf("second run did not say it cleared the old team:\n%s", out)
	}
	if _, err := os.Stat(p2.root); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the demo's directory %s is still there without --keep (%v)", p2.root, err)
	}
	checkDemoTeam(t, p2.cohortHome)
}

// checkDemoTeam: both teammates joined and left, both tasks were completed
// by their owners.
func checkDemoTeam(t *testing.T, cohortHome string) {
	t.Helper()
	store, err := team.NewStore(team.HomeConfig(cohortHome))
	if err != nil {
		t.Fatal(err)
	}
	tm, err := store.Load(demoTeam)
	if err != nil {
		t.Fatal(err)
	}
	active := map[string]bool{}
	for _, m := range tm.Config.Members {
		active[m.Name] = m.IsActive
	}
	// The session has ended: the team is orphaned, its lead inactive too.
	if diff := cmp.Diff(map[string]bool{team.LeadName: false, "alice": false, "bob": false}, active); diff != "" {
		t.Errorf("members' isActive at the end (-want +got):\n%s", diff)
	}
	l, err := store.Tasks(demoTeam)
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := l.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ ID, Status, Owner string }
	var got []row
	for _, tk := range tasks {
		got = append(got, row{tk.ID, string(tk.Status), tk.Owner})
	}
	want := []row{{"1", "completed", "alice"}, {"2", "completed", "bob"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("shared task list (-want +got):\n%s", diff)
	}
}

// checkDemoRules: every request was answered by the script, the story's
// turning points happened, and no agent fell through to its fallback.
func checkDemoRules(t *testing.T, recs []fakeapi.Recorded) {
	t.Helper()
	fired := map[string]int{}
	for _, rec := range recs {
		if rec.Status != 200 || rec.Error != "" {
			t.Errorf("request %d: status %d: %s", rec.Index, rec.Status, rec.Error)
		}
		fired[rec.Label]++
	}
	for _, want := range []string{"lead-creates-team", "lead-fills-task-list", "lead-spawns-teammates",
		"alice-claims", "alice-fixes", "alice-tells-bob", "alice-completes", "bob-claims", "bob-tells-alice",
		"bob-completes", "survey-globs", "survey-reports"} {
		if fired[want] != 1 {
			t.Errorf("rule %s answered %d requests, want 1", want, fired[want])
		}
	}
	if n := fired["lead-starts-survey"]; n != 1 {
		t.Errorf("the lead started the survey %d times, want once", n)
	}
	if n := fired["alice-reports-last"] + fired["bob-reports-last"]; n < 1 {
		t.Errorf("nobody saw the whole list completed")
	}
	for _, bad := range []string{"alice-rests", "bob-rests", "survey-gives-up"} {
		if fired[bad] != 0 {
			t.Errorf("rule %s answered %d requests: an agent lost the thread", bad, fired[bad])
		}
	}
}

// checkDemoDelivery: every chat message in the inboxes reached its
// recipient's model exactly once, idle notifications at most once, and the
// background agent's notification reached the lead exactly once.
func checkDemoDelivery(t *testing.T, recs []fakeapi.Recorded, msgs []mailbox.Message) {
	t.Helper()
	last := lastRequests(t, recs)
	for name := range demoConversations {
		if last[name] == nil {
			t.Fatalf("no request from %s", name)
		}
	}
	seen := map[string]string{}
	for name, r := range last {
		seen[name] = userText(r)
	}
	chats := 0
	idle := map[string]int{}
	for _, m := range msgs {
		switch m.Type {
		case mailbox.TypeText:
			chats++
			if n := strings.Count(seen[m.To], mailbox.Render(m)); n != 1 {
				t.Errorf("%s → %s %q reached %s's model %d times, want 1", m.From, m.To, m.Summary, m.To, n)
			}
		case mailbox.TypeIdleNotification:
			idle[m.From]++
		}
	}
	if chats != 4 {
		t.Errorf("%d chat messages in the inboxes, want 4 (alice↔bob, each to the lead)", chats)
	}
	for from, sent := range idle {
		n := 0
		for _, line := range strings.Split(seen[team.LeadName], "<teammate-message ") {
			if strings.HasPrefix(line, `from="`+from+`"`) && strings.Contains(line, `summary="idle">`) {
				n++
			}
		}
		// Idle notices are folded into the lead's next wake, never a wake
		// of their own: one sent after the last wake is never shown.
		if n > sent {
			t.Errorf("%s sent %d idle notifications; the lead's model saw %d", from, sent, n)
		}
	}
	if n := strings.Count(seen[team.LeadName], "</task-notification>"); n != 1 {
		t.Errorf("the lead's model saw %d task notifications, want 1", n)
	}
	if !strings.Contains(seen[team.LeadName], `<summary>Agent "Survey the Go files" completed</summary>`) {
		t.Errorf("the lead never saw the survey's notification:\n%s", seen[team.LeadName])
	}
}

// checkDemoNarrative: the printed story names each step.
func checkDemoNarrative(t *testing.T, out string) {
	t.Helper()
	for _, want := range []string{
		"forms team cohort-demo",
		"adds task #1 to the shared list", "adds task #2 to the shared list",
		"alice   joins the team (in-process, color ", "bob     joins the team (in-process, color ",
		"alice   claims task #1", "bob     claims task #2",
		"alice   → bob: greeting typo fixed in greet.go", "bob     ← alice: greeting typo fixed in greet.go",
		"bob     → alice: main.go needs no change", "alice   ← bob: main.go needs no change",
		"alice   completes task #1", "bob     completes task #2",
		"is idle, waiting for messages",
		"scout   starts in the background: Survey the Go files",
		"lead    ← <task-notification>: Agent \"Survey the Go files\" completed",
		"sends shutdown requests to",
		"alice   approves the shutdown request", "bob     approves the shutdown request",
		"task #1 completed (alice)", "task #2 completed (bob)",
		"cost $0.00",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the narrative lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(strings.TrimSpace(out), "\n") + 1; n > 70 {
		t.Errorf("the narrative has %d lines; it should read in about 30–60", n)
	}
}

// TestDemoBareEnvironment runs the demo with nothing but HOME set: no API
// key, no COHORT_HOME, no PATH, no TMPDIR. It writes nothing under HOME and
// removes its temporary directory.
func TestDemoBareEnvironment(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	out, errOut, code, p := runDemoMain(t, map[string]string{"HOME": home}, "demo", "--output-format", "json")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	// The fields of the result line that this test reads (package cli's
	// tests cannot import internal/clitest, which imports package cli).
	var r struct {
		Type         string  `json:"type"`
		IsError      bool    `json:"is_error"`
		NumTurns     int     `json:"num_turns"`
		Result       string  `json:"result"`
		TotalCostUSD float64 `json:"total_cost_usd"`
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &r); err != nil {
		t.Fatalf("json result: %v\n%s", err, out)
	}
	if r.Type != "result" || r.IsError || r.TotalCostUSD != 0 || r.NumTurns < 5 || r.Result == "" {
		t.Errorf("result: %+v", r)
	}
	if strings.Count(strings.TrimSpace(out), "\n") != 0 {
		t.Errorf("json output is more than the result line:\n%s", out)
	}
	if !strings.HasPrefix(p.cohortHome, p.root) {
		t.Errorf("COHORT_HOME %s is not inside the demo's directory %s", p.cohortHome, p.root)
	}
	if _, err := os.Stat(p.root); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the demo's directory %s is still there (%v)", p.root, err)
	}
	if entries, _ := os.ReadDir(home); len(entries) != 0 {
		t.Errorf("the demo wrote into HOME: %v", entries)
	}
}

// TestDemoRefuses: bad usage fails at once with exit 2 and a message that
// says what to do; a foreign team in the way is left alone.
func TestDemoRefuses(t *testing.T) {
	t.Parallel()
	foreign := demoEnv(t)
	foreignDir := filepath.Join(foreign["COHORT_HOME"], "teams", demoTeam)
	store, err := team.NewStore(team.HomeConfig(foreign["COHORT_HOME"]))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.Create(t.Context(), team.CreateSpec{Name: demoTeam, Description: "someone else's team"}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		vars map[string]string
		args []string
		want string
	}{
		{"model", demoEnv(t), []string{"demo", "--model", "sonnet"}, "without --model"},
		{"cwd", demoEnv(t), []string{"demo", "--cwd", "/"}, "without --model, --cwd"},
		{"color", demoEnv(t), []string{"demo", "--color", "sometimes"}, `--color "sometimes"`},
		{"args", demoEnv(t), []string{"demo", "now"}, "unknown command"},
		{"relative home", map[string]string{"HOME": t.TempDir(), "COHORT_HOME": "rel"}, []string{"demo"}, "not an absolute path"},
		{"foreign team", foreign, []string{"demo"}, "was not made by cohort demo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, errOut, code, _ := runDemoMain(t, tc.vars, tc.args...)
			if code != 2 || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut, tc.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(foreignDir, "config.json")); err != nil {
		t.Errorf("the foreign team was touched: %v", err)
	}
}

// TestDemoScriptExpands: any project path, quotes and backslashes included,
// lands in the script's tool inputs intact.
func TestDemoScriptExpands(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"/tmp/plain", `/tmp/with "quotes" and \back\slashes`, "/tmp/spaces and ünïcode"} {
		sc, err := fakeapi.ParseScript("team.yaml", []byte(expandDemoScript(demoScript, dir)))
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		req := &fakeapi.Request{Messages: []fakeapi.Message{
			{Role: "user", Content: []fakeapi.Block{{Type: "text", Text: "You are on task #1 of the shared list"}}},
			{Role: "assistant", Content: []fakeapi.Block{{Type: "tool_use", ID: "t1", Name: "TaskUpdate", Input: json.RawMessage(`{}`)}}},
			{Role: "user", Content: []fakeapi.Block{{Type: "tool_result", ToolUseID: "t1",
				Content: []fakeapi.Block{{Type: "text", Text: "Updated task #1 (status).\n#1 in_progress (alice): Fix"}}}}},
		}}
		reply := sc.Policy()(req)
		if len(reply.Content) != 1 || reply.Content[0].Name != "Read" {
			t.Fatalf("%s: reply %+v, want a Read", dir, reply)
		}
		var in struct {
			FilePath string `json:"file_path"`
		}
		if err := json.Unmarshal(reply.Content[0].Input, &in); err != nil {
			t.Fatal(err)
		}
		if in.FilePath != dir+"/greet.go" {
			t.Errorf("file_path %q, want %q", in.FilePath, dir+"/greet.go")
		}
	}
}

func TestThousands(t *testing.T) {
	t.Parallel()
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 174363: "174,363", 1234567: "1,234,567", -4500: "-4,500"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestDemoColor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode, noColor string
		want, bad     bool
	}{
		{mode: "always", want: true},
		{mode: "always", noColor: "1", want: true},
		{mode: "never"},
		{mode: "auto"}, // stdout is a buffer, not a terminal
		{mode: "auto", noColor: "1"},
		{mode: "rainbow", bad: true},
	} {
		inv := &Invocation{Stdout: &bytes.Buffer{}, Getenv: func(k string) string {
			return map[string]string{"NO_COLOR": tc.noColor}[k]
		}}
		got, err := demoColor(tc.mode, inv)
		if got != tc.want || (err != nil) != tc.bad {
			t.Errorf("demoColor(%q, NO_COLOR=%q) = %v, %v", tc.mode, tc.noColor, got, err)
		}
	}
}

// TestNarratorDeliveries checks the lines for messages and notifications
// reaching a conversation, with and without color.
func TestNarratorDeliveries(t *testing.T) {
	t.Parallel()
	for _, color := range []bool{false, true} {
		var b bytes.Buffer
		start := time.Unix(0, 0)
		n := newNarrator(narratorConfig{W: &b, Color: color, Start: start, Now: func() time.Time { return start }})
		n.bind("lead-id", nil)
		n.colors["alice"] = "blue"
		text := mailbox.Render(mailbox.Message{From: "alice", Color: "blue", Summary: "done", Text: "all good"}) +
			mailbox.Render(mailbox.Message{From: "alice", Summary: "idle", Text: "alice is waiting"}) +
			"<task-notification>\n<task-id>x</task-id>\n<summary>Agent \"Look\" completed</summary>\n</task-notification>"
		n.delivered("lead", []llm.Block{llm.Text(text)})
		got := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
		want := []string{
			`  0.0s  lead    ← alice: done`,
			`  0.0s  lead    ← <task-notification>: Agent "Look" completed`,
		}
		if color {
			want = []string{
				"  0.0s  \x1b[1mlead  \x1b[0m  ← \x1b[34malice\x1b[0m: done",
				"  0.0s  \x1b[1mlead  \x1b[0m  ← <task-notification>: Agent \"Look\" completed",
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("color %v (-want +got):\n%s", color, diff)
		}
		if n.notifications() != 1 {
			t.Errorf("notifications = %d, want 1", n.notifications())
		}
	}
}

// TestNarratorLines feeds the narrator the events of a small story and
// checks the lines it prints, one per step.
func TestNarratorLines(t *testing.T) {
	t.Parallel()
	bg := true
	use := func(id, name, input string) llm.Block {
		return llm.Block{Type: llm.BlockToolUse, ID: id, Name: name, Input: json.RawMessage(input)}
	}
	asst := func(agent, parent string, blocks ...llm.Block) cohort.Event {
		return cohort.Event{Type: cohort.EventAssistant, AgentID: agent, ParentToolUseID: parent,
			Message: &cohort.Message{Role: llm.RoleAssistant, Content: blocks}}
	}
	result := func(agent, id string, structured any, isError bool, text string) cohort.Event {
		raw, _ := json.Marshal(structured)
		b := llm.Block{Type: llm.BlockToolResult, ToolUseID: id, IsError: isError, Content: []llm.Block{llm.Text(text)}}
		return cohort.Event{Type: cohort.EventUser, AgentID: agent, ToolUseResult: raw,
			Message: &cohort.Message{Role: llm.RoleUser, Content: []llm.Block{b}}}
	}
	taskEv := func(sub, id, toolUse, typ string) cohort.Event {
		return cohort.Event{Type: cohort.EventSystem, Subtype: sub, TaskID: id, ToolUseID: toolUse, TaskType: typ}
	}
	teamEv := func(kind, from, text string) cohort.Event {
		return cohort.Event{Type: cohort.EventSystem, Subtype: cohort.SubtypeTeam, Team: &cohort.TeamEvent{Kind: kind, From: from, Text: text}}
	}
	started := taskEv(cohort.SubtypeTaskStarted, "a1", "call-1", "local_agent")
	started.Description, started.IsBackgrounded = "Look around", &bg
	mate := taskEv(cohort.SubtypeTaskStarted, "t1", "", "in_process_teammate")
	mate.IsBackgrounded = &bg
	done := taskEv(cohort.SubtypeTaskNotification, "a1", "call-1", "local_agent")
	done.Status, done.TaskUsage = "completed", &cohort.TaskUsage{TotalTokens: 12345, ToolUses: 2}
	mateDone := taskEv(cohort.SubtypeTaskNotification, "t1", "", "in_process_teammate")
	mateDone.Status = "completed"
	events := []cohort.Event{
		asst("lead-id", "", use("call-1", "Agent", `{"name":"scout","description":"Look around","run_in_background":true}`)),
		started,
		mate,
		asst("lead-id", "", use("c2", "TaskCreate", `{}`)),
		result("lead-id", "c2", tasklist.Task{ID: "1", Subject: "Fix it", Status: tasklist.StatusPending}, false, "ok"),
		asst("alice@crew", "", use("c3", "TaskUpdate", `{}`)),
		result("alice@crew", "c3", tasklist.Task{ID: "1", Subject: "Fix it", Status: tasklist.StatusInProgress}, false, "ok"),
		asst("alice@crew", "", use("c4", "Read", `{"file_path":"/proj/a/b.go"}`), use("c5", "SendMessage", `{"to":"bob","message":"first line\nsecond"}`)),
		result("alice@crew", "c5", nil, true, `No member named "bob".`),
		asst("a1", "call-1", use("c7", "Glob", `{"pattern":"*.go"}`), llm.Text("Found two.\nMore")),
		asst("alice@crew", "", use("c6", "TaskList", `{}`)),
		result("alice@crew", "c6", []tasklist.Task{{ID: "1", Status: tasklist.StatusCompleted}, {ID: "2", Status: tasklist.StatusPending}}, false, "ok"),
		done,
		mateDone,
		teamEv(cohort.TeamIdle, "alice", ""),
		teamEv(cohort.TeamShutdown, "alice", ""),
		teamEv(cohort.TeamDead, "bob", "its process exited"),
	}
	var b bytes.Buffer
	start := time.Unix(0, 0)
	n := newNarrator(narratorConfig{W: &b, Start: start, Now: func() time.Time { return start }, Project: "/proj"})
	n.bind("lead-id", nil)
	for _, ev := range events {
		n.event(ev)
	}
	want := []string{
		"  0.0s  scout   starts in the background: Look around (task a1)",
		"  0.0s  lead    adds task #1 to the shared list: Fix it",
		"  0.0s  alice   claims task #1: Fix it",
		"  0.0s  alice   reads a/b.go",
		"  0.0s  alice   → bob: first line",
		`  0.0s  alice   SendMessage failed: No member named "bob".`,
		"  0.0s  scout   searches the project (Glob *.go)",
		"  0.0s  scout   “Found two.”",
		"  0.0s  alice   checks the shared list: #1 completed, #2 pending",
		"  0.0s  scout   completed after 2 tool call(s) and 12,345 tokens, and reports back",
		"  0.0s  alice   is idle, waiting for messages (the lead is told)",
		"  0.0s  alice   approves the shutdown request and stops",
		"  0.0s  bob     stopped without shutting down: its process exited",
	}
	if diff := cmp.Diff(want, strings.Split(strings.TrimRight(b.String(), "\n"), "\n")); diff != "" {
		t.Errorf("narrative (-want +got):\n%s", diff)
	}
	// Every assistant message is a model call: two by the lead, three by
	// alice, one by the scout.
	if n.calls != 6 || !n.agents["scout"] || len(n.agents) != 3 {
		t.Errorf("calls %d, agents %v: want 6 calls by the lead, alice and scout", n.calls, n.agents)
	}
}
