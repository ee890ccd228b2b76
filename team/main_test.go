package team

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/tasklist"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// t0 is the clock start of every test store.
var t0 = time.UnixMilli(1_750_000_000_000)

// stepClock returns a clock that advances one second per call, so every
// timestamp differs and tests stay deterministic.
func stepClock() func() time.Time {
	var mu sync.Mutex
	n := 0
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		n++
		return t0.Add(time.Duration(n) * time.Second)
	}
}

// quietMailbox is the mailbox template of test stores (no inotify watches
// are needed: the tests only register inboxes).
func quietMailbox() mailbox.Config { return mailbox.Config{NoFSNotify: true} }

// newStore returns a store in a temporary root with a stepping clock. The
// package never reads HOME or COHORT_HOME, so tests need not set them.
func newStore(t testing.TB) *Store {
	t.Helper()
	s, err := NewStore(StoreConfig{Root: t.TempDir(), Now: stepClock(), Mailbox: quietMailbox()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func mustCreate(t testing.TB, s *Store, name string) *Team {
	t.Helper()
	tm, err := s.Create(context.Background(), CreateSpec{Name: name, Description: "test team", LeadSessionID: "sess-1", Cwd: "/work"})
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

func mustTasks(t testing.TB, s *Store, team string) *tasklist.List {
	t.Helper()
	l, err := s.Tasks(team)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Helper processes: the multi-process tests re-run this test binary with
// -test.run=^TestHelperProcess$ and these variables set.
const (
	envHelper = "COHORT_TEAM_HELPER" // "addmember", "claim" or "lead"
	envRoot   = "COHORT_TEAM_ROOT"
	envTeam   = "COHORT_TEAM_NAME"
	envNames  = "COHORT_TEAM_NAMES" // comma-separated member names to add
	envTask   = "COHORT_TEAM_TASK"  // task id to claim
	envOwner  = "COHORT_TEAM_OWNER"
)

func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(envHelper)
	if mode == "" {
		t.Skip("runs only as a helper process of the multi-process tests")
	}
	out, err := runHelper(mode)
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(1)
	}
	fmt.Println(out)
	os.Exit(0)
}

// runHelper says "ready", waits for a line on stdin so that all helpers
// start together, then does its one job and returns what to print.
func runHelper(mode string) (string, error) {
	s, err := NewStore(StoreConfig{Root: os.Getenv(envRoot), Mailbox: quietMailbox()})
	if err != nil {
		return "", err
	}
	team := os.Getenv(envTeam)
	fmt.Println("ready")
	if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	switch mode {
	case "addmember":
		for _, n := range strings.Split(os.Getenv(envNames), ",") {
			if _, err := s.AddMember(ctx, team, MemberSpec{Name: n, AgentType: "general-purpose", BackendType: BackendTmux}); err != nil {
				return "", err
			}
		}
		return "added", nil
	case "claim":
		l, err := s.Tasks(team)
		if err != nil {
			return "", err
		}
		_, err = l.Claim(ctx, os.Getenv(envTask), os.Getenv(envOwner))
		switch {
		case err == nil:
			return "won", nil
		case errors.Is(err, tasklist.ErrClaimed):
			return "lost", nil
		}
		return "", err
	case "lead":
		// Lead the team, say so, and hold the lead until killed.
		if _, err := s.Claim(ctx, CreateSpec{Name: team, Description: "led by a helper", LeadSessionID: os.Getenv(envOwner)}); err != nil {
			return "", err
		}
		fmt.Println("led")
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		return "released", nil
	}
	return "", fmt.Errorf("unknown helper mode %q", mode)
}

// helper is one running helper process.
type helper struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

// startHelpers starts n helpers, each with env(i) added to its
// environment, and waits until all say "ready".
func startHelpers(t *testing.T, n int, env func(i int) []string) []*helper {
	t.Helper()
	hs := make([]*helper, n)
	for i := range n {
		cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), env(i)...)
		cmd.Stderr = &lockedBuffer{}
		cmd.WaitDelay = 10 * time.Second
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		h := &helper{cmd: cmd, stdin: stdin, out: bufio.NewReader(stdout)}
		hs[i] = h
		t.Cleanup(func() {
			h.stdin.Close()
			h.cmd.Process.Kill()
			h.cmd.Wait()
		})
	}
	// All start at once; each says "ready" once its store is open.
	for i, h := range hs {
		if line, err := h.out.ReadString('\n'); err != nil || line != "ready\n" {
			t.Fatalf("helper %d: got %q, %v; stderr: %s", i, line, err, h.cmd.Stderr)
		}
	}
	return hs
}

// release lets every helper go and returns each one's final line.
func release(t *testing.T, hs []*helper) []string {
	t.Helper()
	for _, h := range hs {
		if _, err := io.WriteString(h.stdin, "go\n"); err != nil {
			t.Fatal(err)
		}
	}
	out := make([]string, len(hs))
	for i, h := range hs {
		line, _ := h.out.ReadString('\n')
		out[i] = strings.TrimSpace(line)
		h.stdin.Close()
		if err := h.cmd.Wait(); err != nil {
			t.Fatalf("helper %d: %v; stderr: %s", i, err, h.cmd.Stderr)
		}
	}
	return out
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type jsonRaw = json.RawMessage

// compactJSON returns raw without insignificant white space.
func compactJSON(raw []byte) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return "invalid: " + string(raw)
	}
	return b.String()
}
