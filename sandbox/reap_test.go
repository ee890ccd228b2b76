package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestAnUnconfinedLauncherConfinesNothingButReapsEverything: a command of
// an unconfined launcher writes where a sandboxed one may not, and a
// process it left behind with setsid dies when the launcher is closed.
func TestAnUnconfinedLauncherConfinesNothingButReapsEverything(t *testing.T) {
	e := newEnv(t, Config{Unconfined: true})
	pidFile := filepath.Join(e.outside, "pid")
	// The sleep writes its pid once it is in a session of its own; the
	// call waits for that, so it has left the call's group when it ends.
	out, code := e.bash(e.project, `touch `+e.outside+`/x; setsid bash -c 'echo $$ > `+pidFile+`.new; mv `+pidFile+`.new `+pidFile+`; exec sleep 300' </dev/null >/dev/null 2>&1 & until [ -s `+pidFile+` ]; do sleep 0.01; done; echo ok`)
	if code != 0 || !strings.Contains(out, "ok") {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(e.outside, "x")); err != nil {
		t.Fatalf("an unconfined command could not write outside the project: %v", err)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatalf("the setsid sleep is not running after the call: %v", err)
	}
	defer unix.Close(fd)
	if err := e.sb.Close(); err != nil {
		t.Fatal(err)
	}
	// Close returns once the launcher has exited, and it exits only after
	// killing what was under it: the sleep has exited by now.
	n, err := unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int((5 * time.Second).Milliseconds()))
	if err != nil || n != 1 {
		t.Fatalf("the setsid sleep (pid %d) outlived the closed launcher (poll %d, %v)", pid, n, err)
	}
}
