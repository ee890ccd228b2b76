package remote

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/internal/testbin"
)

// agent({isolation: 'remote'}) runs a step on a NATS worker: its answer
// comes back to the script and its work as a branch of the project.
func TestWorkflowStepOnARemoteWorker(t *testing.T) {
	t.Parallel()
	r := newRemoteRig(t, remotePolicy(0, nil))
	r.h.Vars["COHORT_WORKFLOW_HOST"] = testbin.Workflow(t, clitest.RaceEnabled)
	r.startWorker("w0")
	r.h.Write("remote.js", `export const meta = {name: "remote", description: "one step on a worker"}
return await agent("remote task 7: write the file", {isolation: "remote"})
`)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	out, errOut, code := r.h.RunCtx(ctx, "workflow", "run", "remote.js", "--nats", r.nats.URL(), "--flag", "remote_agents=on",
		"--permission-mode", "acceptEdits", "--output-format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	res := r.h.Result(out)
	if !strings.HasPrefix(res.Result, `"wrote task-7.txt`) {
		t.Fatalf("result %q; want the remote agent's answer", res.Result)
	}
	// The worker reports tokens; the run prices them for its budget.
	if strings.Contains(res.Result, "Cost: $0.0000") || !strings.Contains(res.Result, "Cost: $") {
		t.Errorf("the remote step cost nothing in the run's account: %q", res.Result)
	}
	branches := strings.Fields(r.h.Git("branch", "--list", "cohort/remote-*", "--format=%(refname:short)"))
	if len(branches) != 1 || !strings.Contains(r.h.Git("show", "--name-only", "--format=%an", branches[0]), "task-7.txt") {
		t.Fatalf("remote branches %v; want one holding task-7.txt", branches)
	}
}
