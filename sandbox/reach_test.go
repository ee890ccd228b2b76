package sandbox

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A sandboxed command cannot drive a tmux server it can see: tmux -S SOCK
// new-window CMD would run CMD outside the sandbox.
func TestCannotDriveTmuxServer(t *testing.T) {
	testCannotDriveTmux(t, Config{Without: testWithout})
}

// testWithout is set by a control run (COHORT_SANDBOX_TEST_WITHOUT) to
// show the escape tests fail without a layer.
var testWithout = strings.Split(os.Getenv("COHORT_SANDBOX_TEST_WITHOUT"), ",")

func testCannotDriveTmux(t *testing.T, cfg Config) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Fatal("this test needs tmux (apt-get install tmux)")
	}
	e := newEnv(t, cfg)
	sock := filepath.Join(e.outside, "tmux.sock")
	start := exec.CommandContext(t.Context(), tmux, "-S", sock, "-f", "/dev/null", "new-session", "-d", "-s", "victim", "sleep 60")
	start.Env = append(os.Environ(), "TMUX=")
	if out, err := start.CombinedOutput(); err != nil {
		t.Fatalf("start tmux: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command(tmux, "-S", sock, "kill-server").Run() })
	marker := filepath.Join(e.outside, "ran-outside")
	out, _ := e.bash(e.project, tmux+` -S `+sock+` new-window 'touch `+marker+`'; sleep 0.5; `+tmux+` -S `+sock+` list-sessions`)
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("tmux ran a command outside the sandbox:\n%s", out)
	}
	if strings.Contains(out, "victim") {
		t.Errorf("the sandboxed command talked to the tmux server:\n%s", out)
	}
	// The same call from outside the sandbox does reach it, so the test
	// would see an escape.
	if out, err := exec.Command(tmux, "-S", sock, "list-sessions").CombinedOutput(); err != nil || !strings.Contains(string(out), "victim") {
		t.Fatalf("control: tmux list-sessions from outside: %v\n%s", err, out)
	}
}

// A Cohort session socket ($COHORT_HOME/sessions/*.sock) accepts messages
// for the lead; a sandboxed command must not reach it.
func TestCannotReachSessionSocket(t *testing.T) {
	e := newEnv(t, Config{Without: testWithout})
	dir := filepath.Join(e.home, ".cohort", "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "s1.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		buf := make([]byte, 64)
		n, _ := c.Read(buf)
		c.Close()
		accepted <- string(buf[:n])
	}()
	defer ln.Close()
	for _, line := range []string{
		`python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect("` + sock + `"); s.send(b"run rm -rf")'`,
		`printf 'run rm -rf' | nc -U ` + sock + ` 2>&1 || printf 'run rm -rf' | socat - UNIX-CONNECT:` + sock + ` 2>&1 || true`,
		`bash -c 'exec 3<>/dev/tcp/127.0.0.1/1' 2>&1; echo x > ` + sock,
	} {
		out, _ := e.bash(e.project, line)
		select {
		case got := <-accepted:
			t.Fatalf("%q reached the session socket (%q):\n%s", line, got, out)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// sandbox.network "deny": no TCP, UDP or DNS.
func TestNetworkDeny(t *testing.T) {
	ln := greeter(t, "tcp", "127.0.0.1:0", "hello from outside")
	port := ln.Addr().(*net.TCPAddr).Port
	probe := fmt.Sprintf(`python3 -c 'import socket; s=socket.create_connection(("127.0.0.1", %d), 2); print(s.recv(64).decode().strip())' 2>&1 | tail -1`, port)
	open := newEnv(t, Config{})
	if out, _ := open.bash(open.project, probe); !strings.Contains(out, "hello from outside") {
		t.Fatalf("control: with the network allowed the probe failed:\n%s", out)
	}
	closed := newEnv(t, Config{DenyNetwork: true})
	out, _ := closed.bash(closed.project, probe+`; python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("1.1.1.1", 53))' 2>&1 | tail -1; getent hosts example.com || echo no-dns`)
	if strings.Contains(out, "hello from outside") || !strings.Contains(out, "no-dns") || !strings.Contains(out, "unreachable") {
		t.Errorf("with the network denied:\n%s", out)
	}
}

// A sandboxed command cannot signal Cohort, and sees no process outside.
func TestCannotSignalOrSeeCohort(t *testing.T) {
	e := newEnv(t, Config{})
	out, _ := e.bash(e.project, fmt.Sprintf(`kill -0 %d 2>&1; kill -TERM %d 2>&1; ls /proc/%d >/dev/null 2>&1 && echo sees-cohort; echo done`, os.Getpid(), os.Getpid(), os.Getpid()))
	if strings.Contains(out, "sees-cohort") || !strings.Contains(out, "done") {
		t.Errorf("output:\n%s", out)
	}
	// We are still here, and nothing was delivered.
	if err := syscall.Kill(os.Getpid(), 0); err != nil {
		t.Fatal(err)
	}
}

// Without Landlock (an old kernel, emulated by leaving it out) the parent
// of a command is the launcher, started with no environment of ours: it
// holds no credentials to read from /proc/$PPID/environ.
func TestNoLandlockFallbackHidesCredentials(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-fallback-secret")
	for _, without := range [][]string{{"landlock"}, {"landlock", "namespaces"}} {
		e := newEnv(t, Config{Without: without})
		rep, err := e.sb.Report(t.Context(), e.project)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Landlock != 0 || len(rep.NotEnforced) == 0 {
			t.Errorf("without %v: report %+v, want no Landlock and what is not enforced", without, rep)
		}
		out, _ := e.bash(e.project, `cat /proc/$PPID/environ | tr '\0' '\n'; cat /proc/$PPID/cmdline; echo; echo end`)
		if strings.Contains(out, "sk-ant-fallback-secret") || !strings.Contains(out, "end") {
			t.Errorf("without %v: /proc/$PPID/environ:\n%s", without, out)
		}
	}
}

// Read deny rules that name a path are enforced: the path is hidden.
func TestDeniedReadHidden(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	secrets := filepath.Join(root, "project", "secrets")
	writeFile(t, filepath.Join(secrets, "key"), "s3cret\n")
	writeFile(t, filepath.Join(root, "project", "id_rsa"), "private\n")
	e := newEnv(t, Config{DenyRead: []string{secrets, filepath.Join(root, "project", "id_rsa")}})
	out, _ := e.bash(filepath.Join(root, "project"), `cat secrets/key; ls -a secrets; cat id_rsa; python3 -c 'print(open("secrets/key").read())' 2>&1 | tail -1; echo end`)
	if strings.Contains(out, "s3cret") || strings.Contains(out, "private") || !strings.Contains(out, "end") {
		t.Errorf("a denied path was read:\n%s", out)
	}
}

// Closing the sandbox stops every command, also those that left their
// process group.
func TestCloseStopsEverything(t *testing.T) {
	e := newEnv(t, Config{})
	mark := fmt.Sprintf("cohort-escaped-%d-%d", os.Getpid(), time.Now().UnixNano())
	// The command returns once the escaped process is running.
	out, _ := e.bash(e.project, `setsid bash -c 'exec -a `+mark+` sleep 300' </dev/null >/dev/null 2>&1 & until grep -qas "^`+mark+`" /proc/[0-9]*/cmdline; do sleep 0.01; done; echo started`)
	if !strings.Contains(out, "started") {
		t.Fatal(out)
	}
	for deadline := time.Now().Add(5 * time.Second); countMarked(mark) != 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the escaped process is not running; the test cannot tell whether Close stops it")
		}
	}
	if err := e.sb.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for countMarked(mark) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := countMarked(mark); n > 0 {
		t.Errorf("%d escaped processes left after Close", n)
	}
}

// countMarked counts processes whose command line starts with mark.
func countMarked(mark string) int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, en := range entries {
		data, err := os.ReadFile(filepath.Join("/proc", en.Name(), "cmdline"))
		if err == nil && strings.HasPrefix(string(data), mark+"\x00") {
			n++
		}
	}
	return n
}

// With sandbox.allowUnixSockets, the listed socket can be reached and the
// known places (here $COHORT_HOME/sessions) stay hidden.
func TestAllowUnixSockets(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	allowed := filepath.Join(root, "allowed.sock")
	cohortHome := filepath.Join(root, "cohort-home")
	sessions := filepath.Join(cohortHome, "sessions")
	if err := os.MkdirAll(sessions, 0o700); err != nil {
		t.Fatal(err)
	}
	session := filepath.Join(sessions, "s.sock")
	for _, p := range []string{allowed, session} {
		greeter(t, "unix", p, "hello")
	}
	e := newEnv(t, Config{AllowUnixSockets: []string{allowed}, CohortHome: cohortHome})
	probe := func(p string) string {
		return `python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect("` + p + `"); print("got", s.recv(16).decode().strip())' 2>&1 | tail -1`
	}
	if out, _ := e.bash(e.project, probe(allowed)); !strings.Contains(out, "got hello") {
		t.Errorf("the allowed socket could not be reached:\n%s", out)
	}
	if out, _ := e.bash(e.project, probe(session)); strings.Contains(out, "got hello") {
		t.Errorf("the session socket was reached with allowUnixSockets set:\n%s", out)
	}
}

// greeter listens on addr and writes msg to every connection until the
// test ends; the cleanup closes the listener and waits for the goroutine.
func greeter(t *testing.T, network, addr, msg string) net.Listener {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte(msg + "\n"))
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln
}
