package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// barrier releases its waiters once n have arrived, or fails them after a
// deadline: a policy that uses it proves that n requests were in flight at
// the same time.
type barrier struct {
	mu      sync.Mutex
	n       int
	arrived int
	open    chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{n: n, open: make(chan struct{})} }

func (b *barrier) wait(ctx context.Context) bool {
	b.mu.Lock()
	b.arrived++
	if b.arrived == b.n {
		close(b.open)
	}
	b.mu.Unlock()
	select {
	case <-b.open:
		return true
	case <-ctx.Done():
		return false
	case <-time.After(20 * time.Second):
		return false
	}
}

// TestThreeParallelSubagents is issue 4's end-to-end test: the lead starts
// three general-purpose agents in one message; each runs two Bash calls and
// reports; the lead finishes. 1 + 3×3 + 1 requests in all.
func TestThreeParallelSubagents(t *testing.T) {
	t.Parallel()
	c := newConv()
	h := newHarness(t, c.policy)
	gate := newBarrier(3)
	var agents []fakeapi.Block
	for i := 1; i <= 3; i++ {
		agents = append(agents, use("Agent", map[string]any{
			"description": fmt.Sprintf("worker %d", i), "subagent_type": "general-purpose",
			"prompt": fmt.Sprintf("sub-%d: count the files twice", i)}))
		n := strconv.Itoa(i)
		// The barrier is on the second request: the first ones start one
		// after the first sibling's first token (they read the prefix it
		// writes to the cache), and from there all three run at once.
		c.on("sub-"+n+":",
			calls(use("Bash", map[string]any{"command": "echo first-" + n})),
			func(r *fakeapi.Request) fakeapi.Reply {
				if !gate.wait(r.Context()) {
					return fakeapi.TextReply("the three subagents did not run concurrently")
				}
				return fakeapi.Reply{Content: []fakeapi.Block{use("Bash", map[string]any{"command": "echo second-" + n})}}
			},
			func(r *fakeapi.Request) fakeapi.Reply {
				return fakeapi.TextReply("report " + n + ": " + strings.Join(toolResults(r), ","))
			})
	}
	var leadSaw []string
	c.on("split the work", calls(agents...), func(r *fakeapi.Request) fakeapi.Reply {
		leadSaw = toolResults(r)
		return fakeapi.TextReply("all three reported")
	})
	out, errOut, code := h.run("-p", "split the work", "--output-format", "json", "--allowedTools", "Bash(echo:*)")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if r := h.result(out); r.Result != "all three reported" {
		t.Fatalf("result = %+v", r)
	}
	reqs := h.srv.Requests()
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
	c := newConv()
	h := newHarness(t, c.policy)
	pidFile := filepath.Join(h.dir, "child.pid")
	c.on("start a slow child", calls(use("Agent", map[string]any{
		"description": "slow child", "prompt": "sleeper: wait a long time"})))
	c.on("sleeper:", calls(use("Bash", map[string]any{
		"command": "echo $$ > " + pidFile + "; sleep 300 & sleep 300; wait"})))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan int, 1)
	go func() {
		_, _, code := h.runCtx(ctx, "-p", "start a slow child", "--allowedTools", "Bash")
		done <- code
	}()
	pgid := waitForPID(t, pidFile)
	cancel()
	select {
	case code := <-done:
		if code == 0 {
			t.Fatal("a cancelled run should not exit 0")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the CLI did not return after cancellation")
	}
	if pids := groupMembers(pgid); len(pids) > 0 {
		t.Fatalf("the child's process group %d still has running members %v after Main returned", pgid, pids)
	}
}

// groupMembers lists the processes of group pgid that are not zombies.
// (Orphaned zombies belong to init, which reaps them in its own time; they
// are dead.)
func groupMembers(pgid int) []int {
	if err := syscall.Kill(-pgid, 0); err == syscall.ESRCH {
		return nil
	}
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			out = append(out, pid)
		}
	}
	return out
}

func waitForPID(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		data, err := os.ReadFile(path)
		if err == nil && strings.HasSuffix(string(data), "\n") {
			pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
			if err == nil {
				return pid
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no pid in %s", path)
	return 0
}
