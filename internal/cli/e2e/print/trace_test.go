package print

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/trace"
)

// TestTraceOfAThreeAgentRun runs a lead with two subagents under --trace
// and checks that the file is valid trace-event JSON with one track per
// agent.
func TestTraceOfAThreeAgentRun(t *testing.T) {
	t.Parallel()
	c := clitest.NewConv()
	h := clitest.New(t, c.Policy)
	h.Write("f.txt", "x\n")
	c.On("trace me", clitest.Calls(
		clitest.Use("Agent", map[string]any{"description": "first helper", "prompt": "helper-one: glob"}),
		clitest.Use("Agent", map[string]any{"description": "second helper", "prompt": "helper-two: glob", "run_in_background": true}),
	), clitest.Text("started"), clitest.Text("done"), clitest.Text("done"))
	for _, n := range []string{"helper-one:", "helper-two:"} {
		c.On(n, clitest.Calls(clitest.Use("Glob", map[string]any{"pattern": "*.txt"})), clitest.Text(n+" found f.txt"))
	}
	path := filepath.Join(t.TempDir(), "run.trace.json")
	out, errOut, code := h.Run("-p", "trace me", "--trace", path)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sum, err := trace.Validate(f)
	if err != nil {
		t.Fatalf("the trace is not valid: %v", err)
	}
	var agents []string
	for _, tr := range sum.Tracks {
		if tr.Spans["agent"] > 0 && !strings.Contains(tr.Name, " · tools ") {
			agents = append(agents, tr.Name)
		}
	}
	if len(agents) != 3 {
		t.Fatalf("want one track per agent (3), got %q", agents)
	}
	if sum.Spans["tool"] == 0 || sum.Spans["model"] == 0 || sum.Spans["turn"] == 0 {
		t.Fatalf("trace lacks tool or request spans: %+v", sum.Spans)
	}
}
