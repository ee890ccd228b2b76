package tmux

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// starterEnv names the socket a re-executed test binary starts a server
// on (see starterMain): the process that gets SIGKILLed in
// TestServerDiesWithItsStarter.
const starterEnv = "COHORT_TMUX_TEST_STARTER"

// starterMain starts a private server with one long-running pane, prints
// the server's and the pane's pids, and blocks until it is killed. It
// never returns: it runs in place of the tests.
func starterMain(socket string) {
	ctx := context.Background()
	s, err := StartServer(ctx, ServerConfig{Socket: socket, Env: os.Environ(), Grace: fastGrace})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	p, err := s.SplitPane(ctx, PaneSpec{Argv: []string{"sh", "-c", readyScript}})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println(s.serverPID, p.PID)
	select {}
}

// TestServerDiesWithItsStarter: a private server does not outlive the
// process that started it when that process is SIGKILLed and so never
// runs Close. Without the keeper the server is a daemon (parent pid 1)
// whose session keeps it, and every pane in it, running for good.
func TestServerDiesWithItsStarter(t *testing.T) {
	t.Parallel()
	startServer(t) // skips without tmux
	ctx := testCtx(t)
	socket := filepath.Join(t.TempDir(), "s.sock")
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(testEnv(t), starterEnv+"="+socket)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the starter printed %q: %v", line, err)
	}
	var serverPID, panePID int
	if _, err := fmt.Sscan(line, &serverPID, &panePID); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("the starter printed %q: %v", line, err)
	}
	t.Cleanup(func() { // whatever the outcome, leave nothing behind
		_ = syscall.Kill(serverPID, syscall.SIGKILL)
		for _, pid := range sessionMembers(panePID) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	if !running(serverPID) || !running(panePID) {
		t.Fatalf("server %d or pane %d not running before the kill", serverPID, panePID)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	eventually(t, ctx, "the server ends after its starter was killed", func() (bool, error) { return !running(serverPID), nil })
	eventually(t, ctx, "the pane's processes end", func() (bool, error) { return len(sessionMembers(panePID)) == 0, nil })
	// The socket is left (nobody ran Close), but nothing answers on it.
	probe := &Server{bin: "tmux", socket: socket, env: testEnv(t), timeout: DefaultTimeout, closed: make(chan struct{})}
	if _, err := probe.run(ctx, "list-sessions"); !errors.Is(err, ErrNoServer) {
		t.Errorf("list-sessions on the dead starter's socket: %v, want ErrNoServer", err)
	}
}
