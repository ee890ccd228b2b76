package cost

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/testbin"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestSharedPrefixWrittenOnce: agents started in one message, with the
// fake's first token as slow as an API's, read their tool array from the
// entry the lead's first request wrote and write the system prompt they
// share once; every other sibling's first request reads it.
func TestSharedPrefixWrittenOnce(t *testing.T) {
	for _, w := range Workloads {
		t.Run(w.Name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			_, recs, err := Run(ctx, t.TempDir(), w)
			if err != nil {
				t.Fatal(err)
			}
			if w.Name == "fork-5x2" {
				return // forks share the lead's whole prefix (agenttool's fork tests)
			}
			firsts := SubagentFirstRequests(recs)
			if len(firsts) != w.agents() {
				t.Fatalf("%d first requests of subagents, want %d", len(firsts), w.agents())
			}
			if w.Name == "team-3x2" {
				checkTeammateFirsts(t, firsts)
				return
			}
			// Every sibling's first request reads the tool array the lead's
			// first request wrote (crew.sharedToolPrefix: thousands of
			// tokens); one writes the system prompt they share (hundreds),
			// and the rest read it behind the sibling gate, writing only
			// their own prompt (tens).
			wrote := 0
			for _, r := range firsts {
				if r.Usage.CacheReadInputTokens < 1024 {
					t.Errorf("request %d did not read the lead's tool prefix: %+v", r.Index, r.Usage)
				}
				if r.Usage.CacheCreationInputTokens >= 300 {
					wrote++
				}
			}
			if wrote != 1 {
				t.Errorf("%d of %d siblings wrote the shared system prompt, want 1", wrote, len(firsts))
			}
		})
	}
}

// TestTmuxTeammatesReadTheFirstOnesPrefix: teammates one message starts in
// tmux panes, each a process of its own, still start behind the first
// (teammate.FileGate): all three read the lead's tool prefix, one writes
// the system prompt they share and two read it.
func TestTmuxTeammatesReadTheFirstOnesPrefix(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (CI installs it; .ci/run does)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	w := TmuxTeam(testbin.Cohort(t, raceEnabled))
	_, recs, err := Run(ctx, t.TempDir(), w)
	if err != nil {
		t.Fatal(err)
	}
	firsts := SubagentFirstRequests(recs)
	if len(firsts) != 3 {
		t.Fatalf("%d first requests of teammates, want 3", len(firsts))
	}
	checkTeammateFirsts(t, firsts)
}

// checkTeammateFirsts: a teammate's tool array is the start of the lead's,
// whose first request put a breakpoint after it, so every teammate's first
// request reads at least that; the teammates' shared system prompt (their
// role note; who each is comes in its first message) is written by the
// first of them only, and the rest read it behind the sibling gate.
func checkTeammateFirsts(t *testing.T, firsts []fakeapi.Recorded) {
	t.Helper()
	wrote := 0
	for _, r := range firsts {
		if r.Usage.CacheReadInputTokens < 1024 {
			t.Errorf("teammate request %d read nothing from the cache (the lead's tool prefix): %+v", r.Index, r.Usage)
		}
		if r.Usage.CacheCreationInputTokens >= 256 {
			wrote++
		}
	}
	if wrote != 1 {
		t.Errorf("%d of %d teammates wrote the shared system prompt, want 1 (the first)", wrote, len(firsts))
	}
}

// TestRunClientBillsACommandLine: the cost of a workload run by another
// program's command line (a built cohort here; Claude Code's claude.exe
// in BENCHMARKS.md) is the fake's accounting of that program's requests,
// checked as an in-process run is; a workload with cohort-only flags is
// refused by name.
func TestRunClientBillsACommandLine(t *testing.T) {
	bin := testbin.Cohort(t, raceEnabled)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	w := Workloads[1] // background-5x2
	b, recs, err := RunClient(ctx, t.TempDir(), w, bin)
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 + w.Spec.Agents*(w.Spec.Turns+1); b.Requests < want || len(SubagentFirstRequests(recs)) != w.Spec.Agents {
		t.Fatalf("%d requests, %d subagents' first, want at least %d and %d", b.Requests, len(SubagentFirstRequests(recs)), want, w.Spec.Agents)
	}
	if b.Read == 0 || b.Written == 0 || b.Equivalents() <= 0 {
		t.Fatalf("bill %+v: the cache simulator saw no writes or reads", b)
	}
	if _, _, err := RunClient(ctx, t.TempDir(), Workloads[2], bin); err == nil || !strings.Contains(err.Error(), Workloads[2].Name) {
		t.Fatalf("a workload with cohort's own flags by command line: %v", err)
	}
}
