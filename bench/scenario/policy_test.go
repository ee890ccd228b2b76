package scenario

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cohort-dev/cohort/internal/cli"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// runCLI runs the CLI in-process on s against an in-process fake answering
// with a fresh Policy, and returns the policy's summary.
func runCLI(t *testing.T, s Spec, extra ...string) Summary {
	t.Helper()
	root := t.TempDir()
	home, project := filepath.Join(root, "home"), filepath.Join(root, "project")
	for _, d := range []string{home, project} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if s.Tools == ToolsMixed {
		s.File = filepath.Join(project, "data.txt")
		if err := os.WriteFile(s.File, []byte("package data\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pol := NewPolicy()
	srv := fakeapi.New(fakeapi.Config{Policy: pol.Reply})
	defer srv.Close()
	vars := map[string]string{
		"HOME": home, "COHORT_HOME": filepath.Join(home, ".cohort"), "PATH": os.Getenv("PATH"),
		"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": srv.URL,
	}
	var env []string
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var out, errb bytes.Buffer
	args := append([]string{"-p", s.Prompt(), "--output-format", "json", "--cwd", project}, extra...)
	code := cli.Main(ctx, cli.Invocation{Args: args, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return vars[k] }, Environ: func() []string { return env },
		Getwd: func() (string, error) { return project, nil }})
	if code != 0 {
		t.Fatalf("cohort exit %d\nstdout: %s\nstderr: %s", code, out.String(), errb.String())
	}
	return pol.Summary()
}

func TestWorkloadsRunAndVerify(t *testing.T) {
	for _, s := range []Spec{
		{Agents: 3, Turns: 2, Tools: ToolsBash},
		{Agents: 4, Turns: 3, PerMessage: 2, Background: true, Tools: ToolsMixed},
	} {
		t.Run(fmt.Sprintf("agents=%d background=%t", s.Agents, s.Background), func(t *testing.T) {
			t.Parallel()
			sum := runCLI(t, s, "--allowedTools", "Bash")
			if err := s.Check(sum, 32); err != nil {
				t.Fatalf("%v\nsummary: %+v", err, sum)
			}
			if sum.LeadRequests < 2 || sum.LeadBytes == 0 {
				t.Errorf("summary %+v: the lead's requests were not seen", sum)
			}
		})
	}
}

// TestCheckCatchesRefusedTools: with Bash denied the run still exits 0,
// and only the check notices.
func TestCheckCatchesRefusedTools(t *testing.T) {
	t.Parallel()
	s := Spec{Agents: 2, Turns: 1, Tools: ToolsBash}
	sum := runCLI(t, s, "--disallowedTools", "Bash")
	err := s.Check(sum, 0)
	if err == nil || !strings.Contains(err.Error(), "tool errors = 2, want 0") || !strings.Contains(err.Error(), "first tool error") {
		t.Fatalf("Check = %v; want it to report the two refused Bash calls", err)
	}
}

// TestAgentLimitIsVisible: with --max-concurrent-agents 2, six background
// agents queue; the fake never sees more than two active, and a check
// against a limit of one notices the difference.
func TestAgentLimitIsVisible(t *testing.T) {
	t.Parallel()
	s := Spec{Agents: 6, Turns: 2, Background: true, Tools: ToolsMixed}
	sum := runCLI(t, s, "--allowedTools", "Bash", "--max-concurrent-agents", "2")
	if err := s.Check(sum, 2); err != nil {
		t.Fatalf("%v\nsummary: %+v", err, sum)
	}
	if sum.MaxActive < 1 || sum.MaxActive > 2 {
		t.Fatalf("MaxActive = %d; want 1 or 2", sum.MaxActive)
	}
	if sum.MaxActive == 2 {
		if err := s.Check(sum, 1); err == nil || !strings.Contains(err.Error(), "over the limit of 1") {
			t.Fatalf("Check with limit 1 = %v; want the excess reported", err)
		}
	}
}

func userText(texts ...string) fakeapi.Message {
	m := fakeapi.Message{Role: "user"}
	for _, s := range texts {
		m.Content = append(m.Content, fakeapi.Block{Type: "text", Text: s})
	}
	return m
}

func agentCall(id string, sub int) fakeapi.Block {
	in, _ := json.Marshal(map[string]string{"prompt": fmt.Sprintf("bench-sub id=%d turns=1 tools=bash file=\nwork", sub)})
	return fakeapi.Block{Type: "tool_use", ID: id, Name: "Agent", Input: in}
}

func result(id, text string) fakeapi.Block {
	return fakeapi.Block{Type: "tool_result", ToolUseID: id, Content: []fakeapi.Block{{Type: "text", Text: text}}}
}

func notification(task string, sub int) string {
	return fmt.Sprintf("<task-notification>\n<task-id>%s</task-id>\n<status>completed</status>\n<result>bench-report id=%d: made 1 tool calls.</result>\n</task-notification>", task, sub)
}

// TestLeadSurvivesCompaction walks the lead through a compaction: the
// summary request gets the progress line, and after the history is replaced
// by the summary the next batch starts where the last one stopped.
func TestLeadSurvivesCompaction(t *testing.T) {
	s := Spec{Agents: 4, Turns: 1, PerMessage: 2, Background: true, Tools: ToolsBash}
	p := NewPolicy()
	history := []fakeapi.Message{
		userText(s.Prompt()),
		{Role: "assistant", Content: []fakeapi.Block{agentCall("t0", 0), agentCall("t1", 1)}},
		{Role: "user", Content: []fakeapi.Block{result("t0", "launched"), result("t1", "launched"),
			{Type: "text", Text: notification("task-a", 0)}, {Type: "text", Text: "Summarise the conversation so far."}}},
	}
	reply := p.Reply(&fakeapi.Request{Messages: history})
	if len(reply.Content) != 1 || reply.Content[0].Type != "text" || !strings.Contains(reply.Content[0].Text, "next=2") {
		t.Fatalf("summary request got %+v; want a text reply with next=2", reply)
	}
	summary := "This conversation continues an earlier one.\n\n<summary>\n" + reply.Content[0].Text + "\n</summary>"
	compacted := []fakeapi.Message{userText(summary), history[1], {Role: "user", Content: history[2].Content[:3]}}
	reply = p.Reply(&fakeapi.Request{Messages: compacted})
	var ids []string
	for _, b := range reply.Content {
		if b.Type != "tool_use" || b.Name != "Agent" {
			t.Fatalf("after compaction got %+v; want Agent calls", reply)
		}
		id, _ := numberAfter(string(b.Input), subIDTag)
		ids = append(ids, fmt.Sprint(id))
	}
	if d := strings.Join(ids, ","); d != "2,3" {
		t.Fatalf("after compaction the lead started agents %s; want 2,3", d)
	}
	sum := p.Summary()
	if sum.Compactions != 1 || sum.Notified != 1 || sum.Duplicates != 0 || sum.AgentResults != 2 || sum.Reports != 1 {
		t.Fatalf("summary = %+v", sum)
	}
}

func TestDuplicateNotificationIsCounted(t *testing.T) {
	s := Spec{Agents: 1, Turns: 1, Background: true, Tools: ToolsBash}
	p := NewPolicy()
	p.Reply(&fakeapi.Request{Messages: []fakeapi.Message{
		userText(s.Prompt()),
		{Role: "assistant", Content: []fakeapi.Block{agentCall("t0", 0)}},
		{Role: "user", Content: []fakeapi.Block{result("t0", "launched"), {Type: "text", Text: notification("task-a", 0)}}},
		{Role: "assistant", Content: []fakeapi.Block{{Type: "text", Text: "noted"}}},
		userText(notification("task-a", 0)),
	}})
	sum := p.Summary()
	if sum.Duplicates != 1 || sum.Notified != 1 {
		t.Fatalf("summary = %+v; want one duplicate of one task", sum)
	}
	if err := s.Check(sum, 0); err == nil || !strings.Contains(err.Error(), "duplicate notifications = 1") {
		t.Fatalf("Check = %v; want the duplicate reported", err)
	}
}

func TestUnknownConversationIsRefused(t *testing.T) {
	p := NewPolicy()
	reply := p.Reply(&fakeapi.Request{Messages: []fakeapi.Message{userText("hello")}})
	if reply.Fault == nil || reply.Fault.Kind != fakeapi.BadRequest || !strings.Contains(reply.Fault.Message, "not a benchmark conversation") {
		t.Fatalf("reply = %+v; want a 400 naming the problem", reply)
	}
	if sum := p.Summary(); sum.Unmatched != 1 || sum.FirstUnmatched == "" {
		t.Fatalf("summary = %+v", sum)
	}
	p.Reset()
	if sum := p.Summary(); sum != (Summary{}) {
		t.Fatalf("after Reset: %+v", sum)
	}
}
