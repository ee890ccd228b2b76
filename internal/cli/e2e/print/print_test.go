package print

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestFileToolSequence drives write → read → edit → grep → glob → bash over
// the CLI and checks both the files and what the model was shown.
func TestFileToolSequence(t *testing.T) {
	t.Parallel()
	var h *clitest.Harness
	var seen [][]string
	record := func(next func(*fakeapi.Request) fakeapi.Reply) func(*fakeapi.Request) fakeapi.Reply {
		return func(r *fakeapi.Request) fakeapi.Reply {
			seen = append(seen, clitest.ToolResults(r))
			return next(r)
		}
	}
	c := clitest.NewConv()
	h = clitest.New(t, c.Policy)
	a := filepath.Join(h.Dir, "notes", "a.txt")
	c.On("file sequence",
		clitest.Calls(clitest.Use("Write", map[string]any{"file_path": a, "content": "hello world\nsecond line\n"})),
		record(clitest.Calls(clitest.Use("Read", map[string]any{"file_path": a}))),
		record(clitest.Calls(clitest.Use("Edit", map[string]any{"file_path": a, "old_string": "hello", "new_string": "goodbye"}))),
		record(clitest.Calls(clitest.Use("Grep", map[string]any{"pattern": "goodbye", "path": h.Dir}))),
		record(clitest.Calls(clitest.Use("Glob", map[string]any{"pattern": "**/*.txt", "path": h.Dir}))),
		record(clitest.Calls(clitest.Use("Bash", map[string]any{"command": "cat notes/a.txt && echo made > notes/b.txt"}))),
		record(clitest.Text("all done")),
	)
	out, errOut, code := h.Run("-p", "file sequence", "--output-format", "json",
		"--permission-mode", "acceptEdits", "--allowedTools", "Bash")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if r := h.Result(out); r.Result != "all done" || r.NumTurns != 7 || r.IsError {
		t.Fatalf("result = %+v", r)
	}
	if got := h.Read("notes/a.txt"); got != "goodbye world\nsecond line\n" {
		t.Fatalf("a.txt = %q", got)
	}
	if got := h.Read("notes/b.txt"); got != "made\n" {
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
	c := clitest.NewConv()
	h := clitest.New(t, c.Policy)
	var cmds []fakeapi.Block
	for _, n := range []string{"1", "2", "3", "4", "5"} {
		cmds = append(cmds, clitest.Use("Bash", map[string]any{"command": "echo " + n + " >> log.txt"}))
	}
	c.On("ordered writes", clitest.Calls(cmds...), clitest.Text("ok"))
	if out, errOut, code := h.Run("-p", "ordered writes", "--allowedTools", "Bash"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if got := h.Read("log.txt"); got != "1\n2\n3\n4\n5\n" {
		t.Fatalf("log.txt = %q", got)
	}
}

// TestDeniedToolContinues checks that print mode denies a call nobody
// approved, tells the model why, and keeps going.
func TestDeniedToolContinues(t *testing.T) {
	t.Parallel()
	c := clitest.NewConv()
	h := clitest.New(t, c.Policy)
	h.Write("keep.txt", "precious\n")
	var denial []string
	c.On("try to delete",
		clitest.Calls(clitest.Use("Bash", map[string]any{"command": "rm keep.txt"})),
		func(r *fakeapi.Request) fakeapi.Reply {
			denial = clitest.ToolResults(r)
			return fakeapi.TextReply("understood, I will not delete it")
		})
	out, errOut, code := h.Run("-p", "try to delete", "--output-format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if r := h.Result(out); r.Result != "understood, I will not delete it" {
		t.Fatalf("result = %+v", r)
	}
	if len(denial) != 1 || !strings.HasPrefix(denial[0], "ERROR:") || !strings.Contains(denial[0], "Permission denied") {
		t.Fatalf("the model should see a denial, got %q", denial)
	}
	if h.Read("keep.txt") != "precious\n" {
		t.Fatal("the denied command ran")
	}
}

func TestBadInputIsAnErrorResultAndTheLoopContinues(t *testing.T) {
	t.Parallel()
	c := clitest.NewConv()
	h := clitest.New(t, c.Policy)
	var results []string
	c.On("bad input",
		clitest.Calls(clitest.Use("Read", map[string]any{"path": "/nope"}), clitest.Use("Read", map[string]any{"file_path": filepath.Join(h.Dir, "missing.txt")})),
		func(r *fakeapi.Request) fakeapi.Reply {
			results = clitest.ToolResults(r)
			return fakeapi.TextReply("recovered")
		})
	out, errOut, code := h.Run("-p", "bad input", "--output-format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if len(results) != 2 || !strings.Contains(results[0], "InputValidationError") || !strings.HasPrefix(results[1], "ERROR:") {
		t.Fatalf("results = %q", results)
	}
}

func TestNoPromptAndNoKeyAreUsageErrors(t *testing.T) {
	t.Parallel()
	h := clitest.New(t, nil)
	if _, errOut, code := h.Run("-p"); code != 2 || !strings.Contains(errOut, "no prompt") {
		t.Fatalf("no prompt: exit %d, %s", code, errOut)
	}
	delete(h.Vars, "ANTHROPIC_API_KEY")
	_, errOut, code := h.Run("-p", "hi")
	if code != 2 || !strings.Contains(errOut, "ANTHROPIC_API_KEY") || !strings.Contains(errOut, "scripted") {
		t.Fatalf("no key: exit %d, %s", code, errOut)
	}
}

func TestStreamJSONShapes(t *testing.T) {
	t.Parallel()
	c := clitest.NewConv()
	h := clitest.New(t, c.Policy)
	h.Write("x.txt", "x\n")
	c.On("stream me", clitest.Calls(clitest.Use("Read", map[string]any{"file_path": filepath.Join(h.Dir, "x.txt")})), clitest.Text("fine"))
	out, errOut, code := h.Run("-p", "stream me", "--output-format", "stream-json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var kinds []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := clitest.JSONUnmarshal(l, &m); err != nil {
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
	c := clitest.NewConv()
	h := clitest.New(t, c.Policy)
	h.Srv.Close()
	h.Srv = fakeapi.New(fakeapi.Config{Policy: c.Policy, Cache: fakeapi.CacheConfig{MinTokens: 1024}})
	t.Cleanup(h.Srv.Close)
	h.Vars["ANTHROPIC_BASE_URL"] = h.Srv.URL
	c.On("remember the number 42", clitest.Text("noted"), clitest.Text("it was 42"))
	out, errOut, code := h.Run("-p", "remember the number 42", "--output-format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	id := h.Result(out).SessionID
	first := h.Srv.Requests()
	out, errOut, code = h.Run("-p", "what was it?", "--output-format", "json", "--resume", id)
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s\n%s", code, out, errOut)
	}
	if r := h.Result(out); r.Result != "it was 42" || r.SessionID != id {
		t.Fatalf("resumed result = %+v", r)
	}
	all := h.Srv.Requests()
	prev, next := first[len(first)-1], all[len(all)-1]
	if next.Usage.CacheReadInputTokens == 0 {
		t.Fatalf("the resumed request read nothing from the cache: %+v", next.Usage)
	}
	// Everything the first run sent is a prefix of what the resumed run
	// sends: same tools, same system bytes, same history.
	if string(clitest.MustJSON(t, prev.Request.Tools)) != string(clitest.MustJSON(t, next.Request.Tools)) ||
		string(clitest.MustJSON(t, prev.Request.System)) != string(clitest.MustJSON(t, next.Request.System)) {
		t.Fatal("tools or system prompt changed across the resume")
	}
	if got := len(next.Request.Messages); got != 3 {
		t.Fatalf("resumed request has %d messages, want 3", got)
	}
	if _, err := os.Stat(filepath.Join(h.Vars["COHORT_HOME"], "projects")); err != nil {
		t.Fatal(err)
	}
	// --continue picks the same session.
	c.On("and again", clitest.Text("unused"))
	c.On("remember the number 42", clitest.Text("noted"), clitest.Text("it was 42"), clitest.Text("still 42"))
	out, _, code = h.Run("-p", "and again", "--output-format", "json", "--continue")
	if r := h.Result(out); code != 0 || r.SessionID != id || r.Result != "still 42" {
		t.Fatalf("--continue: exit %d, %+v", code, r)
	}
}
