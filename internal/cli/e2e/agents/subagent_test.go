package agents

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestThreeParallelSubagents is issue 4's end-to-end test: the lead starts
// three general-purpose agents in one message; each runs two Bash calls and
// reports; the lead finishes. 1 + 3×3 + 1 requests in all.
func TestThreeParallelSubagents(t *testing.T) {
	t.Parallel()
	c := clitest.NewConv()
	h := clitest.New(t, c.Policy)
	gate := clitest.NewBarrier(3)
	var agents []fakeapi.Block
	for i := 1; i <= 3; i++ {
		agents = append(agents, clitest.Use("Agent", map[string]any{
			"description": fmt.Sprintf("worker %d", i), "subagent_type": "general-purpose",
			"prompt": fmt.Sprintf("sub-%d: count the files twice", i)}))
		n := strconv.Itoa(i)
		// The barrier is on the second request: the first ones start one
		// after the first sibling's first token (they read the prefix it
		// writes to the cache), and from there all three run at once.
		c.On("sub-"+n+":",
			clitest.Calls(clitest.Use("Bash", map[string]any{"command": "echo first-" + n})),
			func(r *fakeapi.Request) fakeapi.Reply {
				if !gate.Wait(r.Context()) {
					return fakeapi.TextReply("the three subagents did not run concurrently")
				}
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Bash", map[string]any{"command": "echo second-" + n})}}
			},
			func(r *fakeapi.Request) fakeapi.Reply {
				return fakeapi.TextReply("report " + n + ": " + strings.Join(clitest.ToolResults(r), ","))
			})
	}
	var leadSaw []string
	c.On("split the work", clitest.Calls(agents...), func(r *fakeapi.Request) fakeapi.Reply {
		leadSaw = clitest.ToolResults(r)
		return fakeapi.TextReply("all three reported")
	})
	out, errOut, code := h.Run("-p", "split the work", "--output-format", "json", "--allowedTools", "Bash(echo:*)")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if r := h.Result(out); r.Result != "all three reported" {
		t.Fatalf("result = %+v", r)
	}
	reqs := h.Srv.Requests()
	if len(reqs) != 11 {
		t.Fatalf("%d requests, want 1 + 3×3 + 1 = 11", len(reqs))
	}
	if len(leadSaw) != 3 {
		t.Fatalf("lead got %d results, want 3", len(leadSaw))
	}
	for i, res := range leadSaw {
		n := strconv.Itoa(i + 1)
		if !strings.Contains(res, "report "+n+": second-"+n) {
			t.Fatalf("result %d = %q", i+1, res)
		}
	}
	// Isolation: no subagent request carries the lead's conversation.
	for _, rec := range reqs {
		first := rec.Request.FirstUserText()
		if strings.Contains(first, "sub-") && strings.Contains(string(rec.Body), "split the work") {
			t.Fatalf("a subagent request contains the lead's prompt: %s", rec.Body)
		}
	}
}

// TestCancellingTheLeadReapsSyncChildren cancels the CLI while a
// synchronous subagent's Bash call is running: when Main returns, the
// child's process group must already be gone.
func TestCancellingTheLeadReapsSyncChildren(t *testing.T) {
	t.Parallel()
	c := clitest.NewConv()
	h := clitest.New(t, c.Policy)
	pidFile := filepath.Join(h.Dir, "child.pid")
	c.On("start a slow child", clitest.Calls(clitest.Use("Agent", map[string]any{
		"description": "slow child", "prompt": "sleeper: wait a long time"})))
	c.On("sleeper:", clitest.Calls(clitest.Use("Bash", map[string]any{
		"command": "echo $$ > " + pidFile + "; sleep 300 & sleep 300; wait"})))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		_, _, code := h.RunCtx(ctx, "-p", "start a slow child", "--allowedTools", "Bash")
		done <- code
	}()
	pgid := clitest.WaitForPID(t, pidFile)
	cancel()
	select {
	case code := <-done:
		if code == 0 {
			t.Fatal("a cancelled run should not exit 0")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the CLI did not return after cancellation")
	}
	if pids := clitest.GroupMembers(pgid); len(pids) > 0 {
		t.Fatalf("the child's process group %d still has running members %v after Main returned", pgid, pids)
	}
}
