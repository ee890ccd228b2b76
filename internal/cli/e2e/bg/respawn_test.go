package bg

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/bgsession"
	"github.com/cohort-dev/cohort/bgsession/attach"
	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestRespawn: respawn restarts a running session in a new process under
// the same id, on the same conversation; a bad query and a missing
// argument are refused.
func TestRespawn(t *testing.T) {
	t.Parallel()
	policy := func(r *fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("fine") }
	h := newHarness(t, policy)
	id := startBG(t, h, "--name", "renew", "lead theta")
	before := waitFor(t, h, id, "done", func(r bgsession.Record) bool { return r.State == bgsession.StateDone })
	if _, errOut, code := h.Run("respawn"); code != 2 || !strings.Contains(errOut, "--all") {
		t.Errorf("respawn without a session: exit %d\n%s", code, errOut)
	}
	if _, errOut, code := h.Run("respawn", "nosuch"); code != 1 || !strings.Contains(errOut, id) {
		t.Errorf("respawn of an unknown session: exit %d, want the candidates\n%s", code, errOut)
	}
	out, errOut, code := h.RunBinary("respawn", "renew")
	if code != 0 || !strings.Contains(out, "respawned · "+id) {
		t.Fatalf("respawn: exit %d\n%s\n%s", code, out, errOut)
	}
	after := waitFor(t, h, id, "alive again", func(r bgsession.Record) bool {
		return r.Alive && r.PID != before.PID && r.State == bgsession.StateDone
	})
	if after.SessionID != before.SessionID || after.Name != "renew" || clitest.ProcessRunning(before.PID) {
		t.Fatalf("respawned: %+v, before %+v (old process running: %v)", after, before, clitest.ProcessRunning(before.PID))
	}
}

// TestRespawnKeepsItsFlags: a session started with --bg and session flags
// (model, permission mode, denied tools, appended system prompt, another
// directory, settings) records them, and after respawn the new process
// runs with every one of them: its attach hello says the same model and
// mode, and the model's next request has the same system prompt and tools.
func TestRespawnKeepsItsFlags(t *testing.T) {
	t.Parallel()
	// What the lead's requests held (the fake's Request is not the
	// policy's to keep).
	type seenRequest struct {
		model, system, last string // system: the system prompt and the first user message (the directories)
		bash                bool
	}
	var mu sync.Mutex
	var seen []seenRequest
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		mu.Lock()
		seen = append(seen, seenRequest{r.Model, r.SystemText() + "\n" + r.FirstUserText(), r.LastUserText(), r.HasTool("Bash")})
		mu.Unlock()
		return fakeapi.TextReply("fine")
	}
	h := newHarness(t, policy)
	extra := t.TempDir()
	settings := filepath.Join(t.TempDir(), "settings.json")
	if err := os.WriteFile(settings, []byte(`{"permissions": {"deny": ["WebFetch"]}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	id := startBG(t, h, "-n", "flagged", "--model", "claude-opus-4-1", "--permission-mode", "acceptEdits",
		"--disallowedTools", "Bash", "--append-system-prompt", "MARK-KEPT-ON-RESPAWN", "--add-dir", extra,
		"--settings", settings, "lead iota")
	before := waitFor(t, h, id, "done", func(r bgsession.Record) bool { return r.State == bgsession.StateDone && r.Alive })
	want := []string{"--add-dir=" + extra, "--append-system-prompt=MARK-KEPT-ON-RESPAWN", "--disallowedTools=Bash",
		"--model=claude-opus-4-1", "--permission-mode=acceptEdits", "--settings=" + settings} // in the flags' order
	if !slices.Equal(before.Flags, want) {
		t.Fatalf("the record's flags are %q, want %q", before.Flags, want)
	}
	mu.Lock()
	first := seen[len(seen)-1]
	mu.Unlock()
	if out, errOut, code := h.RunBinary("respawn", id); code != 0 {
		t.Fatalf("respawn: exit %d\n%s\n%s", code, out, errOut)
	}
	after := waitFor(t, h, id, "alive again", func(r bgsession.Record) bool {
		return r.Alive && r.PID != before.PID && r.State == bgsession.StateDone
	})
	if !slices.Equal(after.Flags, want) || after.Name != "flagged" {
		t.Fatalf("after respawn the record is %+v", after)
	}
	reg, err := bgsession.Open(h.Vars["COHORT_HOME"])
	if err != nil {
		t.Fatal(err)
	}
	refuse := func(context.Context, cohort.PermissionRequest) (cohort.Decision, error) {
		return cohort.Decision{}, errors.New("no prompts in this test")
	}
	cl, err := attach.Dial(t.Context(), reg.ControlPath(id), refuse)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if cl.Model() != "claude-opus-4-1" || cl.Mode() != "acceptEdits" {
		t.Errorf("the respawned session runs model %q in mode %q", cl.Model(), cl.Mode())
	}
	for _, err := range cl.Run(t.Context(), "after respawn") {
		if err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	last := seen[len(seen)-1]
	mu.Unlock()
	if !strings.Contains(last.last, "after respawn") {
		t.Fatalf("the last request is not the prompt after respawn: %q", last.last)
	}
	if last.model != first.model || last.bash || !strings.Contains(last.system, "MARK-KEPT-ON-RESPAWN") {
		t.Errorf("after respawn the request has model %q (before %q), Bash %v, system prompt and first message:\n%s", last.model, first.model, last.bash, last.system)
	}
	if !strings.Contains(first.system, "MARK-KEPT-ON-RESPAWN") || first.bash {
		t.Errorf("the first request did not have the flags either: the check above proves nothing")
	}
	// What shows in no request (the other directory, the settings) is on
	// the new process's command line.
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", after.PID))
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Split(string(cmdline), "\x00")
	for _, f := range want {
		if !slices.Contains(args, f) {
			t.Errorf("the respawned process runs without %s: %q", f, args)
		}
	}
}
