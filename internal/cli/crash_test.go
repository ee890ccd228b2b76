package cli

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestAKilledSessionResumesAnyNumberOfTimes is issue 17 item 7: the lead
// is SIGKILLed while its Bash call sleeps; --continue works twice (the
// first resume writes its repair of the unanswered call into the
// transcript, so the second sends a valid history), and the command that
// was cut short is not run again.
func TestAKilledSessionResumesAnyNumberOfTimes(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	h := newHarness(t, func(r *fakeapi.Request) fakeapi.Reply {
		if !strings.Contains(r.FirstUserText(), "count and sleep") {
			return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "no rule"}}
		}
		if r.Turn() == 0 {
			return fakeapi.Reply{Content: []fakeapi.Block{use("Bash", map[string]any{"command": "echo X >> count.txt; sleep 42"})}}
		}
		return fakeapi.TextReply("resumed " + r.LastUserText())
	})
	cmd := exec.Command(bin, "-p", "count and sleep", "--allowedTools", "Bash", "--cwd", h.dir)
	cmd.Env = h.environ()
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	counted := func() bool {
		data, _ := os.ReadFile(filepath.Join(h.dir, "count.txt"))
		return len(data) > 0
	}
	if !waitFor(30*time.Second, counted) {
		t.Fatalf("the Bash call never ran\nstderr: %s", errb.String())
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	for i, prompt := range []string{"first resume", "second resume"} {
		out, errOut, code := h.run("-p", prompt, "--continue", "--cwd", h.dir)
		if code != 0 || !strings.Contains(out, "resumed") {
			t.Fatalf("resume %d: exit %d\nstdout: %s\nstderr: %s", i+1, code, out, errOut)
		}
		// Only the first resume has a repair to make (and say so).
		warned := strings.Contains(errOut, "marked them interrupted")
		if (i == 0) != warned {
			t.Errorf("resume %d: repaired unanswered calls: %v (only the first may)\n%s", i+1, warned, errOut)
		}
	}
	if got := h.read("count.txt"); got != "X\n" {
		t.Errorf("count.txt = %q: the cut-short command ran again", got)
	}
}

// TestCrashAndResume is issue 17's crash test: a lead with three background
// agents and an in-process teammate is SIGKILLed at a random point (seeded;
// the seed is logged, COHORT_CRASH_SEED replays one), then continued twice.
// Every time: no Bash child outlives the lead by more than 5 s, both
// resumes succeed, every agent whose launch the lead saw is accounted for
// exactly once (its completed notification or a killed one), and no
// teammate message reaches the lead twice.
func TestCrashAndResume(t *testing.T) {
	bin := buildBinary(t)
	seed := time.Now().UnixNano()
	if s := os.Getenv("COHORT_CRASH_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	t.Logf("seed %d (COHORT_CRASH_SEED=%d replays it)", seed, seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	for i := range 20 {
		delay := time.Duration(rng.Int64N(int64(1200 * time.Millisecond)))
		tag := fmt.Sprintf("%d%03d", os.Getpid()%100000, i)
		t.Run(fmt.Sprintf("iter%02d", i), func(t *testing.T) {
			t.Parallel()
			crashOnce(t, bin, delay, tag)
		})
	}
}

func crashOnce(t *testing.T, bin string, delay time.Duration, tag string) {
	t.Logf("SIGKILL after %v", delay)
	// Each sleep has an argument of its own (0.4<tag><k> seconds), so the
	// test can find this iteration's Bash children.
	sleepArg := func(k int) string { return fmt.Sprintf("0.4%s%d", tag, k) }
	began := make(chan struct{})
	var beganOnce sync.Once
	h := newHarness(t, func(r *fakeapi.Request) fakeapi.Reply {
		first, turn := r.FirstUserText(), r.Turn()
		for k := 1; k <= 3; k++ {
			if strings.Contains(first, fmt.Sprintf("BG-%d:", k)) {
				if turn == 0 {
					return fakeapi.Reply{Content: []fakeapi.Block{use("Bash", map[string]any{"command": "sleep " + sleepArg(k) + "; echo bg"})}}
				}
				return fakeapi.TextReply(fmt.Sprintf("bg-%d done", k))
			}
		}
		switch {
		case strings.Contains(first, "MATE-GO"):
			switch turn {
			case 0:
				return fakeapi.Reply{Content: []fakeapi.Block{use("Bash", map[string]any{"command": "sleep " + sleepArg(4)})}}
			case 1:
				return fakeapi.Reply{Content: []fakeapi.Block{use("SendMessage", map[string]any{"to": "team-lead", "summary": "done", "message": "MATE-REPORT"})}}
			}
			return fakeapi.TextReply("idle")
		case strings.Contains(first, "crash run"):
			beganOnce.Do(func() { close(began) })
			switch turn {
			case 0:
				return fakeapi.Reply{Content: []fakeapi.Block{use("TeamCreate", map[string]any{"team_name": "crash"})}}
			case 1:
				var blocks []fakeapi.Block
				for k := 1; k <= 3; k++ {
					blocks = append(blocks, use("Agent", map[string]any{"description": fmt.Sprintf("bg %d", k),
						"prompt": fmt.Sprintf("BG-%d: sleep and report", k), "run_in_background": true}))
				}
				blocks = append(blocks, use("Agent", map[string]any{"description": "mate", "prompt": "MATE-GO",
					"name": "mate", "team_name": "crash"}))
				return fakeapi.Reply{Content: blocks}
			}
			return fakeapi.TextReply("lead ok")
		}
		return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "no rule"}}
	})
	h.shortHome() // the session socket path must fit
	args := []string{"--allowedTools", "Bash", "--teammate-mode", "in-process", "--cwd", h.dir, "--output-format", "json"}
	cmd := exec.Command(bin, append([]string{"-p", "crash run"}, args...)...)
	cmd.Env = h.environ()
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
	// The random point is counted from the lead's first request: the
	// session exists (a kill before it leaves nothing to resume).
	select {
	case <-began:
	case <-exited:
		t.Fatalf("the lead ended before its first request\nstderr: %s", errb.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("the lead never sent its first request\nstderr: %s", errb.String())
	}
	select {
	case <-time.After(delay):
		_ = cmd.Process.Signal(syscall.SIGKILL)
	case <-exited: // finished first: the resumes still must work
	}
	<-exited
	all := []string{sleepArg(1), sleepArg(2), sleepArg(3), sleepArg(4)}
	if !waitFor(5*time.Second, func() bool { return len(sleepers(all...)) == 0 }) {
		t.Errorf("Bash children %v outlived the killed lead by 5 s", sleepers(all...))
	}
	for _, prompt := range []string{"resume one", "resume two"} {
		out, errOut, code := h.run(append([]string{"-p", prompt, "--continue"}, args...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d\nstdout: %s\nstderr: %s\nfirst run's stderr: %s", prompt, code, out, errOut, errb.String())
		}
	}
	history := finalHistory(t, h.srv, "crash run")
	var launched []string
	reports := 0
	for _, m := range history {
		for _, b := range m.Content {
			text := b.Text
			for _, c := range b.Content {
				text += c.Text
			}
			if b.Type == "tool_result" {
				if mm := agentIDText.FindStringSubmatch(text); mm != nil {
					launched = append(launched, mm[1])
				}
			}
			if m.Role == "user" && b.Type == "text" {
				reports += strings.Count(text, "MATE-REPORT")
			}
		}
	}
	count, statuses := map[string]int{}, map[string]int{}
	for _, n := range userNotices(history) {
		count[n.TaskID]++
		statuses[n.Status]++
		if n.Status != "completed" && n.Status != "killed" {
			t.Errorf("task %s: notification status %q", n.TaskID, n.Status)
		}
	}
	for _, id := range launched {
		if count[id] != 1 {
			t.Errorf("background agent %s is accounted for %d times, want once (notifications %v)", id, count[id], count)
		}
	}
	t.Logf("%d agents launched; notifications %v; teammate reports %d", len(launched), statuses, reports)
	if reports > 1 {
		t.Errorf("the teammate's message reached the lead %d times", reports)
	}
}
