package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/testbin"
	"github.com/cohort-dev/cohort/workflow/host"
	"github.com/google/go-cmp/cmp"
)

// spawner answers agent() calls through a function, counting them.
type spawner struct {
	answer func(req host.AgentRequest) (host.AgentResult, error)
	calls  atomic.Int64
}

func (s *spawner) Spawn(ctx context.Context, req host.AgentRequest) (host.AgentResult, error) {
	s.calls.Add(1)
	return s.answer(req)
}

func realHost(t *testing.T) host.Config {
	return host.Config{Path: testbin.Workflow(t, raceEnabled)}
}

const review = `export const meta = {
  name: "review",
  description: "Review each file, then verify each finding",
  phases: [{title: "review"}, {title: "verify"}],
}
log("files:", args.files.length)
phase("review")
const out = await pipeline(args.files,
  (f) => agent("review " + f, {label: "review " + f}),
  (r, f) => agent("verify " + r, {label: "verify " + f, phase: "verify"}))
return {out}
`

func TestRunInTheHostProcess(t *testing.T) {
	sp := &spawner{answer: func(req host.AgentRequest) (host.AgentResult, error) {
		return host.AgentResult{Text: strings.ToUpper(req.Prompt), Cost: 0.25}, nil
	}}
	var mu sync.Mutex
	var kinds []string
	res, err := host.Run(t.Context(), realHost(t), host.RunRequest{Name: "review.js", Source: review,
		Args: json.RawMessage(`{"files":["a.go","b.go"]}`), Dir: t.TempDir()}, sp, func(e host.Event) {
		mu.Lock()
		defer mu.Unlock()
		if e.Kind == "log" || e.Kind == "phase" {
			kinds = append(kinds, e.Kind+":"+e.Text)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"out":["VERIFY REVIEW A.GO","VERIFY REVIEW B.GO"]}`
	if string(res.Value) != want {
		t.Errorf("value = %s, want %s", res.Value, want)
	}
	if res.Agents != 4 || res.Live != 4 || sp.calls.Load() != 4 || res.Cost != 1 {
		t.Errorf("agents %d live %d spawned %d cost %v, want 4 4 4 1", res.Agents, res.Live, sp.calls.Load(), res.Cost)
	}
	wantPhases := []host.PhaseCost{{Title: "review", Agents: 2, Cost: 0.5}, {Title: "verify", Agents: 2, Cost: 0.5}}
	if d := cmp.Diff(wantPhases, res.Phases); d != "" {
		t.Errorf("phases (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"log:files: 2", "phase:review"}, kinds); d != "" {
		t.Errorf("events (-want +got):\n%s", d)
	}
}

func TestScriptErrorsComeBackFromTheHost(t *testing.T) {
	sp := &spawner{answer: func(host.AgentRequest) (host.AgentResult, error) { return host.AgentResult{Text: "x"}, nil }}
	for _, tc := range []struct{ name, src, want string }{
		{"throws", "export const meta = {name: \"t\", description: \"d\"}\nawait agent(\"a\")\nthrow new Error(\"nope\")\n", "flow.js:3"},
		{"parse", "export const meta = {name: \"t\", description: \"d\"}\nconst = 1\n", "flow.js:2"},
		{"clock", "export const meta = {name: \"t\", description: \"d\"}\nreturn Date.now()\n", "Date.now() is not available"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := host.Run(t.Context(), realHost(t), host.RunRequest{Name: "flow.js", Source: tc.src}, sp, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestCheckAndList(t *testing.T) {
	c, err := host.Check(t.Context(), realHost(t), host.CheckRequest{Name: "review.js", Source: review})
	if err != nil {
		t.Fatal(err)
	}
	if c.Meta.Description != "Review each file, then verify each finding" || c.AgentCalls != 2 || len(c.Meta.Phases) != 2 {
		t.Errorf("checked = %+v", c)
	}
	_, err = host.Check(t.Context(), realHost(t), host.CheckRequest{Name: "bad.js", Source: "export const meta = {name: x, description: \"d\"}\n"})
	if err == nil || !strings.Contains(err.Error(), "pure literal") {
		t.Errorf("a meta with a variable: err = %v", err)
	}

	root := t.TempDir()
	dir := root + "/.claude/workflows"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(dir+"/review.js", []byte(review), 0o644)
	os.WriteFile(dir+"/broken.js", []byte("no meta here"), 0o644)
	saved, err := host.List(t.Context(), realHost(t), root)
	if err != nil {
		t.Fatal(err)
	}
	if len(saved) != 2 || saved[0].Name != "broken" || saved[0].Error == "" || saved[1].Meta == nil || saved[1].Meta.Name != "review" {
		t.Errorf("saved = %+v", saved)
	}
}

// A cancelled run ends at once even while an agent is working and the
// script is busy: the host is stopped, not waited for.
func TestCancelStopsAHostThatIsComputing(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	sp := &spawner{answer: func(host.AgentRequest) (host.AgentResult, error) {
		cancel()
		return host.AgentResult{Text: "x"}, nil
	}}
	src := "export const meta = {name: \"t\", description: \"d\"}\nawait agent(\"a\")\nwhile (true) {}\n"
	_, err := host.Run(ctx, realHost(t), host.RunRequest{Name: "loop.js", Source: src, CPUSlice: time.Hour}, sp, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func fakeHost(mode string) host.Config {
	return host.Config{Path: os.Args[0], Env: append(os.Environ(), fakeEnv+"="+mode), Grace: 200 * time.Millisecond}
}

// A host that misbehaves is a clear error, and nothing hangs.
func TestABadHostIsAnError(t *testing.T) {
	sp := &spawner{answer: func(host.AgentRequest) (host.AgentResult, error) { return host.AgentResult{}, nil }}
	for _, tc := range []struct{ mode, want string }{
		{"garbage", "workflow host protocol: line 2 from the workflow host: not a JSON message"},
		{"unknown", `line 1 from the workflow host: unknown message type "bogus"`},
		{"agent-without-id", `line 1 from the workflow host: a "agent" message without a positive id`},
		{"torn", "line 1 from the workflow host: a line cut off without a newline"},
		{"die", "the workflow host exited before it answered (exit code 3); its stderr: boom: the engine crashed"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			_, err := host.Run(ctx, fakeHost(tc.mode), host.RunRequest{Name: "x.js", Source: "x"}, sp, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v\nwant it to contain %q", err, tc.want)
			}
		})
	}
}

// A host that ignores the closing of its input is killed when the run is
// over, and Run still returns.
func TestAStubbornHostIsKilled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := host.Run(ctx, fakeHost("stubborn"), host.RunRequest{Name: "x.js", Source: "x"}, &spawner{}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestFindNamesTheInstallCommand(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := host.Find()
	if !errors.Is(err, host.ErrNoHost) || !strings.Contains(err.Error(), "go install github.com/cohort-dev/cohort/cmd/cohort-workflow") {
		t.Fatalf("err = %v", err)
	}
	_, err = host.Run(t.Context(), host.Config{}, host.RunRequest{}, &spawner{}, nil)
	if !errors.Is(err, host.ErrNoHost) {
		t.Fatalf("Run without a host: %v", err)
	}
}

// A script that computes without awaiting is stopped by the CPU bound in
// the host, and the error names the line it was on.
func TestARunawayScriptIsStoppedWithItsLine(t *testing.T) {
	sp := &spawner{answer: func(host.AgentRequest) (host.AgentResult, error) { return host.AgentResult{Text: "x"}, nil }}
	src := "export const meta = {name: \"t\", description: \"d\"}\nawait agent(\"a\")\nfor (let i = 0; ; i++) {}\n"
	_, err := host.Run(t.Context(), realHost(t), host.RunRequest{Name: "spin.js", Source: src, CPUSlice: 300 * time.Millisecond}, sp, nil)
	if err == nil || !strings.Contains(err.Error(), "without awaiting an agent") || !strings.Contains(err.Error(), "spin.js:3") {
		t.Fatalf("err = %v; want the CPU bound's error naming spin.js:3", err)
	}
}
