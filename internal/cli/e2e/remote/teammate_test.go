package remote

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// meshPolicy is the in-process team scenario with a task each: alice
// claims task 1, writes alpha.txt, greets bob and reports; bob claims
// task 2, writes beta.txt and reports once alice's greeting arrives. The
// lead makes the team and the tasks and spawns both as remote teammates.
func meshPolicy(rec *clitest.Seen) fakeapi.Policy {
	use := func(name string, in map[string]any) fakeapi.Reply {
		return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use(name, in)}}
	}
	return func(r *fakeapi.Request) fakeapi.Reply {
		first, turn := r.FirstUserText(), r.Turn()
		switch {
		case strings.Contains(first, "alice-task"):
			rec.Add("alice", r.LastUserText())
			switch turn {
			case 0:
				return use("TaskUpdate", map[string]any{"taskId": "1", "status": "in_progress"})
			case 1:
				return use("Write", map[string]any{"file_path": filepath.Join(clitest.AgentCwd(r), "alpha.txt"), "content": "alpha\n"})
			case 2:
				return use("TaskUpdate", map[string]any{"taskId": "1", "status": "completed"})
			case 3:
				return use("SendMessage", map[string]any{"to": "bob", "message": "hi bob, alice here", "summary": "greeting"})
			case 4:
				return use("SendMessage", map[string]any{"to": "team-lead", "message": "alice: greeted bob", "summary": "report"})
			}
			return fakeapi.TextReply("alice done")
		case strings.Contains(first, "bob-task"):
			rec.Add("bob", r.LastUserText())
			switch turn {
			case 0:
				return use("TaskUpdate", map[string]any{"taskId": "2", "status": "in_progress"})
			case 1:
				return use("Write", map[string]any{"file_path": filepath.Join(clitest.AgentCwd(r), "beta.txt"), "content": "beta\n"})
			case 2:
				return use("TaskUpdate", map[string]any{"taskId": "2", "status": "completed"})
			}
			// alice's greeting may come with any of bob's turns, even
			// beside a tool result before his task is done: he answers it
			// once his task is done, whenever it came.
			if strings.Contains(rec.All("bob"), "hi bob, alice here") && !strings.Contains(rec.All("bob-replied"), "yes") {
				rec.Add("bob-replied", "yes")
				return use("SendMessage", map[string]any{"to": "team-lead", "message": "bob: alice said hi", "summary": "report"})
			}
			return fakeapi.TextReply("bob idle")
		case strings.Contains(first, "run the team"):
			rec.Add("lead", r.LastUserText())
			switch turn {
			case 0:
				return use("TeamCreate", map[string]any{"team_name": "mesh", "description": "across machines"})
			case 1:
				return fakeapi.Reply{Content: []fakeapi.Block{
					clitest.Use("TaskCreate", map[string]any{"subject": "alpha", "description": "write alpha.txt"}),
					clitest.Use("TaskCreate", map[string]any{"subject": "beta", "description": "write beta.txt"}),
				}}
			case 2:
				return fakeapi.Reply{Content: []fakeapi.Block{
					clitest.Use("Agent", map[string]any{"description": "alice", "team_name": "mesh", "name": "alice", "prompt": "alice-task: take task 1, greet bob"}),
					clitest.Use("Agent", map[string]any{"description": "bob", "team_name": "mesh", "name": "bob", "prompt": "bob-task: take task 2, wait for alice"}),
				}}
			}
			return fakeapi.TextReply("noted")
		}
		return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "no rule"}}
	}
}

// TestTeamAcrossMachines is issue 42's team on three "machines": the lead
// and two cohort worker processes, each with its own COHORT_HOME and
// working directory, on one embedded NATS server. The lead spawns alice
// and bob as remote teammates; each claims a task, writes a file and
// messages; every message arrives once, each task is claimed once, and
// each teammate's work comes back to the lead as a branch.
func TestTeamAcrossMachines(t *testing.T) {
	t.Parallel()
	rec := &clitest.Seen{}
	r := newRemoteRig(t, meshPolicy(rec))
	w0, w1 := r.startWorker("w0", "--concurrency", "1"), r.startWorker("w1", "--concurrency", "1")
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	args := []string{"-p", "run the team", "--output-format", "json", "--nats", r.nats.URL(),
		"--teammate-mode", "remote", "--permission-mode", "acceptEdits"}
	out, stderr, code := r.h.RunCtx(ctx, args...)
	if code != 0 {
		t.Fatalf("lead exited %d\nstderr: %s\nstdout: %s\nw0: %s\nw1: %s", code, stderr, out, w0.stderr.String(), w1.stderr.String())
	}
	lead := rec.All("lead")
	for _, want := range []string{"alice: greeted bob", "bob: alice said hi"} {
		if n := strings.Count(lead, want); n != 1 {
			t.Errorf("the lead saw %q %d times, want once; it saw:\n%s", want, n, lead)
		}
	}
	if n := strings.Count(rec.All("bob"), "hi bob, alice here"); n != 1 {
		t.Errorf("bob got alice's message %d times, want once", n)
	}
	if t.Failed() {
		t.Logf("alice saw:\n%s\nbob saw:\n%s\nlead stderr:\n%s\nw0:\n%s\nw1:\n%s", rec.All("alice"), rec.All("bob"), stderr, w0.stderr.String(), w1.stderr.String())
	}
	for i, w := range []*worker{w0, w1} {
		if !strings.Contains(w.stderr.String(), `msg="job started"`) {
			t.Errorf("worker w%d ran no teammate:\n%s", i, w.stderr.String())
		}
	}
	branches := strings.Fields(r.h.Git("branch", "--list", "cohort/remote-*", "--format=%(refname:short)"))
	files := map[string]bool{}
	for _, br := range branches {
		for _, f := range strings.Fields(r.h.Git("show", "--name-only", "--format=", br)) {
			files[f] = true
		}
	}
	if len(branches) != 2 || !files["alpha.txt"] || !files["beta.txt"] {
		t.Fatalf("branches %v with files %v; want two, with alpha.txt and beta.txt", branches, files)
	}
}
