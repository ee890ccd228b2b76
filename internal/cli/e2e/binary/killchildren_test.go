package binary

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// sleepers returns the pids of running processes whose command line is
// "sleep <arg>" for one of args.
func sleepers(args ...string) []int {
	return procsWhere(func(argv []string) bool {
		return len(argv) == 2 && filepath.Base(argv[0]) == "sleep" && slices.Contains(args, argv[1])
	})
}

// procsWhere returns the pids of running processes whose command line
// match accepts.
func procsWhere(match func(argv []string) bool) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		if match(strings.Split(strings.TrimRight(string(data), "\x00"), "\x00")) && clitest.ProcessRunning(pid) {
			out = append(out, pid)
		}
	}
	return out
}

var sleepSeq atomic.Int64

// TestBashChildrenDieWithAKilledLead is issue 17 item 9: SIGKILL a cohort
// whose Bash calls run sleep children — one in the call's process group,
// one that left it with setsid, one in a background shell — and none may
// outlive it by more than 5 s: with the sandbox (its pid namespace), with
// the sandbox but no namespaces (the plain launcher), and without the
// sandbox.
func TestBashChildrenDieWithAKilledLead(t *testing.T) {
	bin := clitest.BuildBinary(t)
	for _, mode := range []struct {
		name string
		args []string
		env  map[string]string
	}{
		{name: "sandbox", args: []string{"--sandbox", "on"}},
		{name: "sandbox-without-namespaces", args: []string{"--sandbox", "on"}, env: map[string]string{"COHORT_SANDBOX_DISABLE": "namespaces"}},
		{name: "no-sandbox", args: []string{"--sandbox", "off"}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			// Unique arguments tell this run's sleeps from everyone else's.
			base := 4_000_000 + 10*int(sleepSeq.Add(1)) + os.Getpid()%1000*1000
			args := []string{strconv.Itoa(base + 1), strconv.Itoa(base + 2), strconv.Itoa(base + 3)}
			started := make(chan struct{}, 4)
			c := clitest.NewConv()
			h := clitest.New(t, func(r *fakeapi.Request) fakeapi.Reply {
				if r.Turn() == 0 {
					started <- struct{}{}
				}
				return c.Policy(r)
			})
			for k, v := range mode.env {
				h.Vars[k] = v
			}
			c.On("keep busy", clitest.Calls(
				clitest.Use("Bash", map[string]any{"command": "sleep " + args[2], "run_in_background": true}),
				clitest.Use("Bash", map[string]any{"command": fmt.Sprintf("sleep %s & setsid sleep %s & sleep 300; wait", args[0], args[1])}),
			), clitest.Text("unreachable"))
			lead := clitest.StartBinary(t, h, bin, append([]string{"-p", "keep busy", "--output-format", "json", "--allowedTools", "Bash", "--cwd", h.Dir}, mode.args...)...)
			t.Cleanup(func() {
				for _, pid := range sleepers(args...) {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			})
			<-started
			if !clitest.WaitFor(30*time.Second, func() bool { return len(sleepers(args...)) == 3 }) {
				t.Fatalf("the sleeps never all ran (running: %v)\nstderr: %s", sleepers(args...), lead.Stderr.String())
			}
			if err := lead.Cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			<-lead.Exited
			if !clitest.WaitFor(5*time.Second, func() bool { return len(sleepers(args...)) == 0 }) {
				t.Fatalf("Bash children %v outlived the killed lead by 5 s\nstderr: %s", sleepers(args...), lead.Stderr.String())
			}
		})
	}
}
