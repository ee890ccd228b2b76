package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestFileToolSequence drives write → read → edit → grep → glob → bash over
// the CLI and checks both the files and what the model was shown.
func TestFileToolSequence(t *testing.T) {
	t.Parallel()
	var h *harness
	var seen [][]string
	record := func(next func(*fakeapi.Request) fakeapi.Reply) func(*fakeapi.Request) fakeapi.Reply {
		return func(r *fakeapi.Request) fakeapi.Reply {
			seen = append(seen, toolResults(r))
			return next(r)
		}
	}
	c := newConv()
	h = newHarness(t, c.policy)
	a := filepath.Join(h.dir, "notes", "a.txt")
	c.on("file sequence",
		calls(use("Write", map[string]any{"file_path": a, "content": "hello world\nsecond line\n"})),
		record(calls(use("Read", map[string]any{"file_path": a}))),
		record(calls(use("Edit", map[string]any{"file_path": a, "old_string": "hello", "new_string": "goodbye"}))),
		record(calls(use("Grep", map[string]any{"pattern": "goodbye", "path": h.dir}))),
		record(calls(use("Glob", map[string]any{"pattern": "**/*.txt", "path": h.dir}))),
		record(calls(use("Bash", map[string]any{"command": "cat notes/a.txt && echo made > notes/b.txt"}))),
		record(text("all done")),
	)
	out, errOut, code := h.run("-p", "file sequence", "--output-format", "json",
		"--permission-mode", "acceptEdits", "--allowedTools", "Bash")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if r := h.result(out); r.Result != "all done" || r.NumTurns != 7 || r.IsError {
		t.Fatalf("result = %+v", r)
	}
	if got := h.read("notes/a.txt"); got != "goodbye world\nsecond line\n" {
		t.Fatalf("a.txt = %q", got)
	}
	if got := h.read("notes/b.txt"); got != "made\n" {
		t.Fatalf("b.txt = %q", got)
	}
	want := []string{"Created", "hello world", "goodbye", "a.txt", "a.txt", "goodbye world"}
	for i, w := range want {
		if len(seen[i]) != 1 || !strings.Contains(seen[i][0], w) || strings.HasPrefix(seen[i][0], "ERROR:") {
			t.Fatalf("step %d: tool result %q should contain %q", i+1, seen[i], w)
		}
	}
}

// TestWritesStayOrdered sends three appends in one message: they must run
// one after another in call order.
func TestWritesStayOrdered(t *testing.T) {
	t.Parallel()
	c := newConv()
	h := newHarness(t, c.policy)
	var cmds []fakeapi.Block
	for _, n := range []string{"1", "2", "3", "4", "5"} {
		cmds = append(cmds, use("Bash", map[string]any{"command": "echo " + n + " >> log.txt"}))
	}
	c.on("ordered writes", calls(cmds...), text("ok"))
	if out, errOut, code := h.run("-p", "ordered writes", "--allowedTools", "Bash"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if got := h.read("log.txt"); got != "1\n2\n3\n4\n5\n" {
		t.Fatalf("log.txt = %q", got)
	}
}

// TestDeniedToolContinues checks that print mode denies a call nobody
// approved, tells the model why, and keeps going.
func TestDeniedToolContinues(t *testing.T) {
	t.Parallel()
	c := newConv()
	h := newHarness(t, c.policy)
	h.write("keep.txt", "precious\n")
	var denial []string
	c.on("try to delete",
		calls(use("Bash", map[string]any{"command": "rm keep.txt"})),
		func(r *fakeapi.Request) fakeapi.Reply {
			denial = toolResults(r)
			return fakeapi.TextReply("understood, I will not delete it")
		})
	out, errOut, code := h.run("-p", "try to delete", "--output-format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if r := h.result(out); r.Result != "understood, I will not delete it" {
		t.Fatalf("result = %+v", r)
	}
	if len(denial) != 1 || !strings.HasPrefix(denial[0], "ERROR:") || !strings.Contains(denial[0], "Permission denied") {
		t.Fatalf("the model should see a denial, got %q", denial)
	}
	if h.read("keep.txt") != "precious\n" {
		t.Fatal("the denied command ran")
	}
}

func TestBadInputIsAnErrorResultAndTheLoopContinues(t *testing.T) {
	t.Parallel()
	c := newConv()
	h := newHarness(t, c.policy)
	var results []string
	c.on("bad input",
		calls(use("Read", map[string]any{"path": "/nope"}), use("Read", map[string]any{"file_path": filepath.Join(h.dir, "missing.txt")})),
		func(r *fakeapi.Request) fakeapi.Reply {
			results = toolResults(r)
			return fakeapi.TextReply("recovered")
		})
	out, errOut, code := h.run("-p", "bad input", "--output-format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if len(results) != 2 || !strings.Contains(results[0], "InputValidationError") || !strings.HasPrefix(results[1], "ERROR:") {
		t.Fatalf("results = %q", results)
	}
}

func TestNoPromptAndNoKeyAreUsageErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	if _, errOut, code := h.run("-p"); code != 2 || !strings.Contains(errOut, "no prompt") {
		t.Fatalf("no prompt: exit %d, %s", code, errOut)
	}
	delete(h.vars, "ANTHROPIC_API_KEY")
	_, errOut, code := h.run("-p", "hi")
	if code != 2 || !strings.Contains(errOut, "ANTHROPIC_API_KEY") || !strings.Contains(errOut, "scripted") {
		t.Fatalf("no key: exit %d, %s", code, errOut)
	}
}

func TestStreamJSONShapes(t *testing.T) {
	t.Parallel()
	c := newConv()
	h := newHarness(t, c.policy)
	h.write("x.txt", "x\n")
	c.on("stream me", calls(use("Read", map[string]any{"file_path": filepath.Join(h.dir, "x.txt")})), text("fine"))
	out, errOut, code := h.run("-p", "stream me", "--output-format", "stream-json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var kinds []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := jsonUnmarshal(l, &m); err != nil {
			t.Fatalf("line is not JSON: %v: %s", err, l)
		}
		k := m["type"].(string)
		if st, ok := m["subtype"].(string); ok {
			k += "/" + st
		}
		kinds = append(kinds, k)
	}
	// As Claude Code prints it: the prompt is not echoed (only
	// --replay-user-messages, with stream-json input, echoes prompts).
	want := "system/init assistant user assistant result/success"
	if got := strings.Join(kinds, " "); got != want {
		t.Fatalf("events = %s, want %s", got, want)
	}
}

func TestResumeReadsTheCache(t *testing.T) {
	t.Parallel()
	c := newConv()
	h := newHarness(t, c.policy)
	h.srv.Close()
	h.srv = fakeapi.New(fakeapi.Config{Policy: c.policy, Cache: fakeapi.CacheConfig{MinTokens: 1024}})
	t.Cleanup(h.srv.Close)
	h.vars["ANTHROPIC_BASE_URL"] = h.srv.URL
	c.on("remember the number 42", text("noted"), text("it was 42"))
	out, errOut, code := h.run("-p", "remember the number 42", "--output-format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	id := h.result(out).SessionID
	first := h.srv.Requests()
	out, errOut, code = h.run("-p", "what was it?", "--output-format", "json", "--resume", id)
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", code, out, errOut)
	}
	if r := h.result(out); r.Result != "it was 42" || r.SessionID != id {
		t.Fatalf("resumed result = %+v", r)
	}
	all := h.srv.Requests()
	prev, next := first[len(first)-1], all[len(all)-1]
	if next.Usage.CacheReadInputTokens == 0 {
		t.Fatalf("the resumed request read nothing from the cache: %+v", next.Usage)
	}
	// Everything the first run sent is a prefix of what the resumed run
	// sends: same tools, same system bytes, same history.
	if string(mustJSON(t, prev.Request.Tools)) != string(mustJSON(t, next.Request.Tools)) ||
		string(mustJSON(t, prev.Request.System)) != string(mustJSON(t, next.Request.System)) {
		t.Fatal("tools or system prompt changed across the resume")
	}
	if got := len(next.Request.Messages); got != 3 {
		t.Fatalf("resumed request has %d messages, want 3", got)
	}
	if _, err := os.Stat(filepath.Join(h.vars["COHORT_HOME"], "projects")); err != nil {
		t.Fatal(err)
	}
	// --continue picks the same session.
	c.on("and again", text("unused"))
	c.on("remember the number 42", text("noted"), text("it was 42"), text("still 42"))
	out, _, code = h.run("-p", "and again", "--output-format", "json", "--continue")
	if r := h.result(out); code != 0 || r.SessionID != id || r.Result != "still 42" {
		t.Fatalf("--continue: exit %d, %+v", code, r)
	}
}
