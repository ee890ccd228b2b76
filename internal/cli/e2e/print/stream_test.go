package print

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/transcript"
)

var streamArgs = []string{"--input-format", "stream-json", "--output-format", "stream-json", "--verbose"}

// TestStreamInputRunsEachMessage: two user lines on stdin are two turns of
// one conversation, each with its result, and the process exits 0 at the
// end of input.
func TestStreamInputRunsEachMessage(t *testing.T) {
	t.Parallel()
	c := clitest.NewConv()
	h := clitest.New(t, c.Policy)
	c.On("first line", clitest.Text("one"), clitest.Text("two"))
	in := `{"type":"user","message":{"role":"user","content":"first line"}}` + "\n" +
		`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"second line"}]}}` + "\n"
	out, errOut, code := h.RunStdin(in, streamArgs...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var results []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.Contains(l, `"type":"result"`) {
			results = append(results, l)
		}
	}
	if len(results) != 2 || !strings.Contains(results[0], `"result":"one"`) || !strings.Contains(results[1], `"result":"two"`) {
		t.Fatalf("results: %q", results)
	}
}

// TestStreamFlagsAreChecked: the stream-json flags refuse what cannot work,
// saying what to change.
func TestStreamFlagsAreChecked(t *testing.T) {
	t.Parallel()
	h := clitest.New(t, func(*fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("x") })
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--input-format", "stream-json"}, "needs --output-format stream-json"},
		{[]string{"--input-format", "yaml", "-p", "x"}, `"yaml" is not one of text, stream-json`},
		{[]string{"-p", "x", "--replay-user-messages"}, "--replay-user-messages needs --input-format stream-json"},
		{[]string{"-p", "x", "--permission-prompt-tool", "stdio"}, "needs --input-format stream-json"},
		{append([]string{"--permission-prompt-tool", "mcp__auth__ask"}, streamArgs...), "only stdio"},
		{append([]string{"hello"}, streamArgs...), "drop the prompt argument"},
		{[]string{"-p", "x", "--session-id", "not-a-uuid"}, "is not a UUID"},
		{[]string{"-p", "x", "--fork-session"}, "fork which session"},
	} {
		_, errOut, code := h.Run(tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestSessionIDForkAndBareResume: --session-id names a new session;
// --resume alone continues the latest; --fork-session continues a copy
// under a new id and leaves the original as it was.
func TestSessionIDForkAndBareResume(t *testing.T) {
	t.Parallel()
	c := clitest.NewConv()
	h := clitest.New(t, c.Policy)
	c.On("remember 7", clitest.Text("noted"), clitest.Text("it was 7"), clitest.Text("forked: 7"))
	const id = "0b6f6c2e-3b1a-4c8e-9d2f-5a7e1c4b9d10"
	out, errOut, code := h.Run("-p", "remember 7", "--output-format", "json", "--session-id", id)
	if code != 0 || h.Result(out).SessionID != id {
		t.Fatalf("--session-id: exit %d, %s\n%s", code, out, errOut)
	}
	if _, errOut, code := h.Run("-p", "again", "--session-id", id); code != 2 || !strings.Contains(errOut, "exists already") {
		t.Errorf("reusing a session id: exit %d, %s", code, errOut)
	}
	out, errOut, code = h.Run("-p", "--resume", "--output-format", "json", "what was it?")
	if r := h.Result(out); code != 0 || r.SessionID != id || r.Result != "it was 7" {
		t.Fatalf("bare --resume: exit %d, %+v\n%s", code, r, errOut)
	}
	orig := transcript.Path(h.ProjectDir(), id)
	before, err := os.ReadFile(orig)
	if err != nil {
		t.Fatal(err)
	}
	out, errOut, code = h.Run("-p", "--resume", id, "--fork-session", "--output-format", "json", "and in the fork?")
	r := h.Result(out)
	if code != 0 || r.SessionID == id || r.Result != "forked: 7" {
		t.Fatalf("--fork-session: exit %d, %+v\n%s", code, r, errOut)
	}
	after, _ := os.ReadFile(orig)
	if !bytes.Equal(before, after) {
		t.Error("the forked-from transcript changed")
	}
	fork, err := os.ReadFile(filepath.Join(h.ProjectDir(), r.SessionID+".jsonl"))
	if err != nil || !bytes.HasPrefix(fork, before) {
		t.Errorf("the fork's transcript does not start with the original's bytes (%v)", err)
	}
}
