package sandbox

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The read-only profile (a command that runs only because the analysis
// judged it read-only): it reads as usual, and nothing it does writes a
// file outside its private TMPDIR or reaches the network, by any route,
// in the project, its git dir and the cache dir that the writing profile
// may write. The same lines in the writing profile do write there, so
// the test would see it.
func TestReadOnlyProfileWritesNothing(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	project := filepath.Join(root, "project")
	gitInit(t, project)
	cache := filepath.Join(root, "cache")
	// /dev/shm is the machine's: the name is this test run's own (its
	// temporary directory's), so two test processes never share it.
	shm := "/dev/shm/ro-shm-" + filepath.Base(filepath.Dir(root))
	lines := func(e *env) map[string]string {
		return map[string]string{
			"redirect":     `echo pwned > ro-redirect`,
			"dev fd climb": `echo pwned > /dev/fd/../../../` + project + `/ro-devfd`,
			"dev fd 3":     `exec 3<.; echo pwned > /dev/fd/3/ro-fd3`,
			"git dir":      `echo pwned > .git/ro-git`,
			"git commit":   `git commit -q --allow-empty -m ro-commit`,
			"cache":        `echo pwned > ` + cache + `/ro-cache`,
			"python":       `python3 -c 'open("ro-python","w").write("x")'`,
			"mkdir":        `mkdir ro-mkdir`,
			"rename":       `mv README.md ro-renamed`,
			"rm":           `rm README.md`,
			"dev shm":      `echo pwned > ` + shm,
			"symlink":      `ln -s /etc/passwd ro-link`,
		}
	}
	for _, prof := range []Profile{ReadOnly, Writing} {
		e := newEnv(t, Config{CacheDir: cache})
		e.profile = prof
		for name, line := range lines(e) {
			out, _ := e.bash(project, line)
			t.Logf("%s %s: %s", prof, name, out)
		}
		var wrote []string
		for _, f := range []string{"ro-redirect", "ro-devfd", "ro-fd3", ".git/ro-git", "ro-python", "ro-mkdir", "ro-renamed", "ro-link"} {
			if _, err := os.Lstat(filepath.Join(project, f)); err == nil {
				wrote = append(wrote, f)
			}
		}
		if _, err := os.Stat(filepath.Join(cache, "ro-cache")); err == nil {
			wrote = append(wrote, "cache")
		}
		if _, err := os.Stat(filepath.Join(project, "README.md")); err != nil {
			wrote = append(wrote, "README.md removed")
		}
		if _, err := os.Stat(shm); err == nil {
			wrote = append(wrote, shm)
			os.Remove(shm)
		}
		if log := run(t, project, "git", "log", "--oneline"); strings.Contains(log, "ro-commit") {
			wrote = append(wrote, "a commit")
		}
		switch {
		case prof == ReadOnly && len(wrote) > 0:
			t.Errorf("read-only profile: commands wrote %q", wrote)
		case prof == Writing && len(wrote) < 5:
			t.Errorf("control: in the writing profile the same lines should write the project; they wrote only %q", wrote)
		}
		if prof == ReadOnly {
			out, code := e.bash(project, `cat README.md && git log --oneline | wc -l && echo tmp > "$TMPDIR/t" && cat "$TMPDIR/t" && echo x > /dev/null && echo ok`)
			if code != 0 || !strings.Contains(out, "hello") || !strings.Contains(out, "tmp") || !strings.Contains(out, "ok") {
				t.Errorf("read-only profile: reading, TMPDIR and /dev/null should work (exit %d):\n%s", code, out)
			}
		}
	}
}

// The read-only profile has no network: TCP to a listener outside, UDP,
// DNS, and Unix sockets all fail, while the writing profile reaches the
// same listener (sandbox.network is not "deny").
func TestReadOnlyProfileNoNetwork(t *testing.T) {
	ln := greeter(t, "tcp", "127.0.0.1:0", "hello from outside")
	port := ln.Addr().(*net.TCPAddr).Port
	sock := filepath.Join(t.TempDir(), "s.sock")
	greeter(t, "unix", sock, "hello from a socket")
	probe := fmt.Sprintf(`python3 -c 'import socket; s=socket.create_connection(("127.0.0.1", %d), 2); print(s.recv(64).decode().strip())' 2>&1 | tail -1;
		python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect("%s"); print(s.recv(64).decode().strip())' 2>&1 | tail -1;
		python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("1.1.1.1", 53))' 2>&1 | tail -1; getent hosts example.com || echo no-dns`, port, sock)
	e := newEnv(t, Config{AllowUnixSockets: []string{sock}})
	if out, _ := e.bash(e.project, probe); !strings.Contains(out, "hello from outside") || !strings.Contains(out, "hello from a socket") {
		t.Fatalf("control: the writing profile should reach both listeners:\n%s", out)
	}
	e.profile = ReadOnly
	out, _ := e.bash(e.project, probe)
	if strings.Contains(out, "hello from") || !strings.Contains(out, "no-dns") || !strings.Contains(out, "unreachable") {
		t.Errorf("the read-only profile reached the network:\n%s", out)
	}
	rep, err := e.sb.ReportFor(t.Context(), e.project, ReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(rep.Enforced, "\n"); !strings.Contains(got, "read-only") || !strings.Contains(got, "no network") {
		t.Errorf("the read-only report does not say what it enforces:\n%s", rep.Describe())
	}
}
