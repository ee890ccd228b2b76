package rewind

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/sessionsock"
)

// talk scripts the lead of TestConversationRewindAcrossProcesses: a prompt
// that says "write" gets a Bash call that writes its word to a file; any
// other prompt, or the call's result, a text answer.
func talk(rt *clitest.Router) {
	rt.On("CV:", func(r *fakeapi.Request) fakeapi.Reply {
		last := r.Messages[len(r.Messages)-1]
		prompt := r.LastUserText()
		if last.Content[0].Type != "tool_result" && strings.Contains(prompt, "write ") {
			word := prompt[strings.LastIndex(prompt, " ")+1:]
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Bash", map[string]any{"command": "echo " + word + " > " + word + ".txt"})}}
		}
		return fakeapi.TextReply("answered: " + prompt)
	})
}

// TestConversationRewindAcrossProcesses is issue 41's conversation rewind:
// every command is its own process, as a person's would be. After
// `cohort rewind SESSION TURN --conversation` (and --both), the resumed
// session's first request for the same prompt is byte-identical to the
// request the checkpointed turn began with (the fake API's log), so the
// cache is read; a second rewind to an earlier turn still finds its place
// although the first rewind rewrote the transcript.
func TestConversationRewindAcrossProcesses(t *testing.T) {
	t.Parallel()
	rt := &clitest.Router{}
	talk(rt)
	h := prepared(t, rt)
	var id string
	// run runs one turn and returns the first request it sent.
	run := func(args ...string) *fakeapi.Request {
		t.Helper()
		seen := len(h.Srv.Requests())
		out, errOut, code := h.Run(append(args, "--permission-mode", "bypassPermissions", "--output-format", "json")...)
		if code != 0 {
			t.Fatalf("%v: exit %d\nstdout: %s\nstderr: %s", args, code, out, errOut)
		}
		id = h.Result(out).SessionID
		reqs := h.Srv.Requests()
		if len(reqs) <= seen || reqs[seen].Request == nil {
			t.Fatalf("%v sent no request", args)
		}
		return reqs[seen].Request
	}
	first := run("-p", "CV: please write one")
	second := run("--resume", id, "-p", "CV: now write two")
	run("--resume", id, "-p", "CV: and a third")
	if got := h.Read("two.txt"); got != "two\n" {
		t.Fatalf("turn 2 wrote %q", got)
	}

	rewind := func(args ...string) string {
		t.Helper()
		out, errOut, code := h.Run(append([]string{"rewind", id}, args...)...)
		if code != 0 {
			t.Fatalf("rewind %v: exit %d\nstdout: %s\nstderr: %s", args, code, out, errOut)
		}
		return out
	}
	if out := rewind("2", "--conversation"); !strings.Contains(out, "the conversation went back to before turn 2") || strings.Contains(out, "files") {
		t.Errorf("rewind --conversation says:\n%s", out)
	}
	if got := h.Read("two.txt"); got != "two\n" {
		t.Fatalf("a conversation rewind changed a file: two.txt = %q", got)
	}
	again := run("--resume", id, "-p", "CV: now write two")
	if !bytes.Equal(again.Raw, second.Raw) {
		t.Errorf("after rewinding to turn 2 the request differs from turn 2's:\nturn 2: %s\nresumed: %s", second.Raw, again.Raw)
	}

	rewind("1", "--both")
	for _, f := range []string{"one.txt", "two.txt"} {
		if _, err := os.Stat(filepath.Join(h.Dir, f)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("--both left %s (stat: %v)", f, err)
		}
	}
	again = run("--resume", id, "-p", "CV: please write one")
	if !bytes.Equal(again.Raw, first.Raw) {
		t.Errorf("after rewinding to turn 1 the request differs from turn 1's:\nturn 1: %s\nresumed: %s", first.Raw, again.Raw)
	}
}

// TestRewindRefusesALiveSession: while another process holds the session
// (its socket's lock, as a running session does), cohort rewind changes
// nothing and says where to rewind it instead; once it has ended, the
// rewind runs.
func TestRewindRefusesALiveSession(t *testing.T) {
	t.Parallel()
	rt := &clitest.Router{}
	talk(rt)
	h := prepared(t, rt)
	// A session socket's path holds at most 107 bytes: a short home.
	home, err := os.MkdirTemp("", "rw")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	h.Vars["COHORT_HOME"] = home
	out, errOut, code := h.Run("-p", "CV: please write one", "--permission-mode", "bypassPermissions", "--output-format", "json")
	if code != 0 {
		t.Fatalf("turn: exit %d\n%s\n%s", code, out, errOut)
	}
	id := h.Result(out).SessionID
	release, err := sessionsock.Hold(filepath.Join(h.Vars["COHORT_HOME"], "sessions"), id)
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"--conversation", "--code", "--both"} {
		out, errOut, code := h.Run("rewind", id, "1", mode, "--force")
		if code == 0 || !strings.Contains(errOut, "is running in another process") {
			t.Errorf("rewind %s of a live session: exit %d\nstdout: %s\nstderr: %s", mode, code, out, errOut)
		}
	}
	if got := h.Read("one.txt"); got != "one\n" {
		t.Errorf("a refused rewind changed one.txt: %q", got)
	}
	if out, errOut, code := h.Run("rewind", id, "1", "--dry-run"); code != 0 {
		t.Errorf("a dry run of a live session: exit %d\n%s\n%s", code, out, errOut)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := h.Run("rewind", id, "1", "--both", "--force"); code != 0 {
		t.Fatalf("rewind after the session ended: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(h.Dir, "one.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the rewind after the session ended left one.txt (stat: %v)", err)
	}
}
