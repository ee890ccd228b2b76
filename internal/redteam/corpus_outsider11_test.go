package redteam

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// The eleventh outsider round (issue 36): attacks by someone who knows
// the design but not the fixes' code, on what no outsider had attacked
// yet — configuration files read without blocking and only when regular
// (internal/ownread.Config), "sandbox": false not honoured in files
// obeyed by approval, the top .mcp.json's record between sessions
// (configtrust tops.json) — and on the program a top .mcp.json server
// runs, which no session protected as hook scripts are.
// /work/notes/attack11-log.md lists every idea and its result.

// o11Known are the round's escapes not fixed yet, by row: TestO11 logs
// them instead of failing unless REDTEAM_KNOWN is set, and fails if one
// no longer escapes (take it off the list then).
var o11Known = map[string]string{}

// Fixed since the round (the rows run as held attacks): o11-srv-adddir
// (an added directory's own opted-out programs are judged and protected)
// and o11-user-hook-import (python -c run in the project runs confined,
// with a notice: hook.Judge), o11-srv-forms and
// o11-kept-worktree (an unconfined server's scripts and python -m module
// files are protected with their folders, hook.ScriptsOf), o11-approved-env
// (an approved file sets no env and cannot widen the sandbox,
// internal/assemble sandboxsettings.go), o11-huge-config, o11-environ-text,
// o11-wt-command, o11-trust-environ and o11-fifo-skill (configuration and
// instructions judged on the file opened, at most 4 MiB, never /proc:
// internal/ownread Config and Text), o11-registry-lock (both trust
// registries hidden from commands, so none can take their locks).

// o11Proof is a shell command that leaves proof name outside (and the
// canary) when it runs unconfined.
func o11Proof(e *Env, name string) string {
	return "touch " + filepath.Join(e.Out, name) + " " + e.Canary
}

// o11PyProof is a Python program doing what o11Proof does, with the
// placeholders the harness fills in a model's call.
func o11PyProof(name string) string {
	return "import os\nfor p in ('{{OUT}}/" + name + "', '{{CANARY}}'):\n    try: open(p, 'w').close()\n    except OSError: pass\n"
}

// o11Call is one tool call of a next session's model.
type o11Call struct {
	tool  string
	input map[string]any
}

// o11Next runs the user's next session in cwd (print mode) against a
// model that makes calls, one a turn, and ends; every request body the
// model's server got is returned with what the CLI printed, and a
// request or output holding the API key or the secret is reported.
func o11Next(t testing.TB, e *Env, cwd string, calls []o11Call, args ...string) string {
	t.Helper()
	var mu sync.Mutex
	var bodies [][]byte
	srv := fakeapi.New(fakeapi.Config{Policy: func(r *fakeapi.Request) fakeapi.Reply {
		mu.Lock()
		bodies = append(bodies, append([]byte(nil), r.Raw...))
		mu.Unlock()
		if n := r.Turn(); n < len(calls) {
			return fakeapi.Reply{Content: []fakeapi.Block{fakeapi.ToolUseBlock("", calls[n].tool, calls[n].input)}}
		}
		return fakeapi.TextReply("done")
	}})
	defer srv.Close()
	e.Vars["ANTHROPIC_BASE_URL"] = srv.URL
	if len(args) == 0 {
		args = []string{"--cwd", cwd, "-p", "hello"}
	}
	stdout, stderr, code, _ := invoke(t, e, args)
	for _, p := range leftovers(e.Root) {
		t.Errorf("the next session (%v) left %s", args, p)
	}
	said := strings.Join([]string{stdout, stderr, fmt.Sprintf("exit %d", code)}, "\n")
	mu.Lock()
	defer mu.Unlock()
	for i, b := range bodies {
		for _, l := range leaks(b, fmt.Sprintf("the model in the next session (%v, request %d)", args, i), e.markers(false)) {
			t.Errorf("%s", l)
		}
	}
	for _, l := range leaks([]byte(said), fmt.Sprintf("the next session's output (%v)", args), e.markers(false)) {
		t.Errorf("%s:\n%s", l, tail(said, 1500))
	}
	return said
}

func o11Bash(cmd string) o11Call {
	return o11Call{"Bash", map[string]any{"command": cmd}}
}

// o11Bounded runs a next session in cwd against no model; it reports one
// that did not end within limit or whose own peak memory (VmHWM, sampled
// from /proc while it runs: its children's are not its own) passed maxHWM
// KiB, and returns what it printed.
func o11Bounded(t testing.TB, e *Env, row, cwd string, limit time.Duration, maxHWM int64, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	if len(args) == 0 {
		args = []string{"-p", "hello"}
	}
	cmd := exec.CommandContext(ctx, cohortBinaryPath, append([]string{"--cwd", cwd}, args...)...)
	cmd.Dir, cmd.Env = e.Project, append(e.environ(), "ANTHROPIC_BASE_URL=http://127.0.0.1:9")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: start cohort: %v", row, err)
	}
	done := make(chan struct{})
	hwm := make(chan int64, 1)
	go func() {
		var peak int64
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			if data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid)); err == nil {
				for _, line := range strings.Split(string(data), "\n") {
					var kb int64
					if _, err := fmt.Sscanf(line, "VmHWM: %d kB", &kb); err == nil && kb > peak {
						peak = kb
					}
				}
			}
			select {
			case <-done:
				hwm <- peak
				return
			case <-tick.C:
			}
		}
	}()
	_ = cmd.Wait()
	close(done)
	peak := <-hwm
	said := out.String()
	if ctx.Err() != nil {
		t.Errorf("%s: the next session in %s did not end within %v (killed):\n%s", row, cwd, time.Since(start), tail(said, 800))
	}
	if peak > maxHWM {
		t.Errorf("%s: the next session in %s grew to %d MiB of memory on what the model left:\n%s", row, cwd, peak/1024, tail(said, 800))
	}
	for _, p := range leftovers(e.Root) {
		t.Errorf("%s: the next session left %s", row, p)
	}
	return said
}

// TestO11 runs the eleventh round: each group of rows in one session,
// sessions in the package's shared slots; rows with a check of their own
// run it after their session, on the world their Setup kept.
func TestO11(t *testing.T) {
	t.Parallel()
	useCohortBinary(t)
	r := &round{list: "o11Known", known: o11Known, prefix: "o11/"}
	for _, n := range append(append(append(o11ServerRows(), o11ConfigRows()...), o11TopRows()...), append(o11MoreRows(), o11XDGRows()...)...) {
		if o8Selected(n.attack) {
			r.addChecked([]*Attack{n.attack}, n.mode, n.loc, n.setup, n.after)
		}
	}
	r.run(t)
}
