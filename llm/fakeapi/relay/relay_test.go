package relay_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/claude"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/llm/fakeapi/relay"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// setup starts a relay in a temp dir and a fake server answering through
// it, and a client of that server.
func setup(t *testing.T, cfg relay.Config) (string, *claude.Model) {
	t.Helper()
	if cfg.Dir == "" {
		cfg.Dir = filepath.Join(t.TempDir(), "relay")
	}
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	rl, err := relay.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := fakeapi.New(fakeapi.Config{Policy: rl.Policy, AwaitPing: 5 * time.Millisecond})
	t.Cleanup(func() { srv.Close(); rl.Close() })
	m, err := claude.New(claude.Config{APIKey: "any", BaseURL: srv.URL, MaxAttempts: 1,
		HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Dir, m
}

var bashTool = llm.ToolDef{Name: "Bash", Description: "Run a shell command.",
	InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"},"description":{"type":"string"}},"required":["command"],"additionalProperties":false}`)}

// send streams one request and returns its response (or error) on a
// channel.
func send(ctx context.Context, m *claude.Model, req *llm.Request) <-chan response {
	out := make(chan response, 1)
	go func() {
		var res response
		for ev, err := range m.Stream(ctx, req) {
			if err != nil {
				res.err = err
				break
			}
			if ev.Type == llm.EventDone {
				res.resp = ev.Response
			}
		}
		out <- res
	}()
	return out
}

type response struct {
	resp *llm.Response
	err  error
}

// waitPending waits until the pending list is exactly want.
func waitPending(t *testing.T, dir string, want ...string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, _ := os.ReadFile(filepath.Join(dir, "pending"))
		if got := strings.Fields(string(data)); strings.Join(got, " ") == strings.Join(want, " ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pending = %q, want %q", data, want)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func readView(t *testing.T, dir string, n string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, n+".request.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func submit(t *testing.T, dir string, n int, answer string) relay.Status {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	st, err := relay.Submit(ctx, dir, n, []byte(answer))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// One agent, two turns: the first view shows the system prompt and tool
// definitions, a malformed answer is reported and fixed in place, the
// answer streams as a tool call, and the second view shows only the result.
func TestRelayTurns(t *testing.T) {
	dir, m := setup(t, relay.Config{})
	req := &llm.Request{Model: "claude-test", MaxTokens: 1000, System: []llm.Block{llm.Text("You are the lead of a test.")},
		Tools: []llm.ToolDef{bashTool}, Messages: []llm.Message{llm.UserText("Count the files.")}}
	done := send(t.Context(), m, req)
	waitPending(t, dir, "0001")
	view := readView(t, dir, "0001")
	for _, want := range []string{"# Request 1: lead, turn 0", "A new agent: lead.", "## System prompt", "You are the lead of a test.",
		"1 tool: Bash.", "### Bash", "Run a shell command.", `"required": [`, "**prompt**", "Count the files.", "0001.answer.md"} {
		if !strings.Contains(view, want) {
			t.Errorf("the first view lacks %q:\n%s", want, view)
		}
	}

	st := submit(t, dir, 1, "Let me look.\n\n```tool Bash\ndescription: list\n```\n")
	if st.State != relay.Invalid || !strings.Contains(st.Detail, "0001.answer.md:3: tool Bash: missing required field command") {
		t.Fatalf("a call without its required field: %+v", st)
	}
	st = submit(t, dir, 1, "Let me look.\n\n```tool Bsh\ncommand: ls\n```\n")
	if st.State != relay.Invalid || !strings.Contains(st.Detail, `tool "Bsh" is not offered in this request (offered: Bash)`) {
		t.Fatalf("an unknown tool: %+v", st)
	}
	waitPending(t, dir, "0001") // still waiting after two bad answers
	st = submit(t, dir, 1, "Let me look.\n\n```tool Bash\ncommand: ls | wc -l\ndescription: Count files\n```\n")
	if st.State != relay.Answered {
		t.Fatalf("the fixed answer: %+v", st)
	}
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	msg := res.resp.Message()
	calls := msg.ToolUses()
	if res.resp.StopReason != "tool_use" || msg.TextContent() != "Let me look." || len(calls) != 1 ||
		string(calls[0].Input) != `{"command":"ls | wc -l","description":"Count files"}` {
		t.Fatalf("response = %+v", res.resp)
	}
	if res.resp.Usage.OutputTokens == 0 || res.resp.Usage.InputTokens == 0 {
		t.Fatalf("usage not computed: %+v", res.resp.Usage)
	}

	req.Messages = append(req.Messages, msg, llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResult(calls[0].ID, "42", false)}})
	done = send(t.Context(), m, req)
	waitPending(t, dir, "0002")
	view = readView(t, dir, "0002")
	for _, want := range []string{"# Request 2: lead, turn 1", "lead continues after your answer to request 1.", "## New since your last answer",
		"**tool result** for Bash `" + calls[0].ID + "`: {\"command\":\"ls | wc -l\"", "42"} {
		if !strings.Contains(view, want) {
			t.Errorf("the second view lacks %q:\n%s", want, view)
		}
	}
	for _, unwanted := range []string{"## System prompt", "## Tools", "Count the files.", "Let me look."} {
		if strings.Contains(view, unwanted) {
			t.Errorf("the second view repeats %q:\n%s", unwanted, view)
		}
	}
	if st := submit(t, dir, 2, "There are 42 files."); st.State != relay.Answered {
		t.Fatalf("%+v", st)
	}
	if res := <-done; res.err != nil || res.resp.StopReason != "end_turn" || res.resp.Message().TextContent() != "There are 42 files." {
		t.Fatalf("second response %+v, %v", res.resp, res.err)
	}
	index, _ := os.ReadFile(filepath.Join(dir, "index.md"))
	if !strings.Contains(string(index), "| lead | 1 | answered | tool result |") {
		t.Errorf("index:\n%s", index)
	}
	if _, err := relay.Submit(t.Context(), dir, 2, []byte("again")); err == nil || !strings.Contains(err.Error(), "answered already") {
		t.Errorf("answering an answered request: %v", err)
	}
}

// A client that gives up marks its request cancelled; a request nobody
// answers in time fails as overloaded and says so.
func TestRelayCancelAndTimeout(t *testing.T) {
	dir, m := setup(t, relay.Config{Timeout: 300 * time.Millisecond})
	ctx, cancel := context.WithCancel(t.Context())
	req := &llm.Request{Model: "claude-test", MaxTokens: 1000, Messages: []llm.Message{llm.UserText("Wait.")}}
	done := send(ctx, m, req)
	waitPending(t, dir)
	waitPending(t, dir, "0001")
	cancel()
	if res := <-done; res.err == nil {
		t.Fatal("a cancelled request succeeded")
	}
	waitPending(t, dir)
	if st, err := relay.ReadStatus(dir, 1); err != nil || st.State != relay.Cancelled || !strings.Contains(st.Detail, "do not answer it") {
		t.Fatalf("status %+v, %v", st, err)
	}
	if view := readView(t, dir, "0001"); !strings.Contains(view, "**cancelled**: the client cancelled the request") {
		t.Fatalf("the view does not say it was cancelled:\n%s", view)
	}

	res := <-send(t.Context(), m, req)
	if res.err == nil || !strings.Contains(res.err.Error(), "no answer to request 2 (lead) within 300ms") {
		t.Fatalf("err = %v; want the timeout", res.err)
	}
	if st, _ := relay.ReadStatus(dir, 2); st.State != relay.TimedOut {
		t.Fatalf("status %+v", st)
	}
}

func TestNewRefusesAnotherRelaysDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "0003.status"), []byte("waiting\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := relay.New(relay.Config{Dir: dir}); err == nil || !strings.Contains(err.Error(), "already holds a relay's files (0003.status)") {
		t.Fatalf("err = %v", err)
	}
	if _, err := relay.Submit(t.Context(), t.TempDir(), 1, []byte("x")); err == nil || !strings.Contains(err.Error(), "has no request 1") {
		t.Fatalf("Submit to an empty directory: %v", err)
	}
}
