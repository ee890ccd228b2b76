package sessionorigin

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// TestMain doubles as the child process the tests start: with
// ORIGIN_TEST_CHILD set it records itself as a session (the value is its
// id) after detecting who started it, prints what Detect found, and waits
// for its stdin to close, so the parent can judge it while it runs.
func TestMain(m *testing.M) {
	if id := os.Getenv("ORIGIN_TEST_CHILD"); id != "" {
		dir := os.Getenv("ORIGIN_TEST_DIR")
		by := Detect(dir)
		if id != "-" {
			if err := Write(dir, id, by); err != nil {
				os.Stderr.WriteString(err.Error())
				os.Exit(1)
			}
		}
		os.Stdout.WriteString(by + "\n")
		buf := make([]byte, 1)
		_, _ = os.Stdin.Read(buf)
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// child starts this test binary as a child process (see TestMain) and
// returns its pid and what its Detect found; the child ends when the test
// does.
func child(t *testing.T, dir, id string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "ORIGIN_TEST_CHILD="+id, "ORIGIN_TEST_DIR="+dir)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); _ = cmd.Wait() })
	line := make([]byte, 0, 64)
	buf := make([]byte, 1)
	for {
		if _, err := out.Read(buf); err != nil || buf[0] == '\n' {
			break
		}
		line = append(line, buf[0])
	}
	return cmd.Process.Pid, string(line)
}

// TestStartedByThePersonOrBySession: a session whose process has no
// session among its ancestors was started by the person, and its messages
// are judged so; a session started in a child of a session's process
// records that session and is judged as not started by the person; a
// plain program under a session, a process that is no session, and an
// unknown pid are not the person's either.
func TestStartedByThePersonOrBySession(t *testing.T) {
	dir := t.TempDir()
	if got := Detect(dir); got != "" {
		t.Fatalf("the test process detected %q before any record", got)
	}
	if err := Write(dir, "top", Detect(dir)); err != nil {
		t.Fatal(err)
	}
	if v := Judge(dir, os.Getpid()); !v.Person {
		t.Errorf("a session nobody started from a session: %+v", v)
	}
	pid, by := child(t, dir, "sub")
	if by != "top" {
		t.Errorf("a session started under session top detected %q", by)
	}
	if v := Judge(dir, pid); v.Person || !strings.Contains(v.Why, "within session top") {
		t.Errorf("a session started by a session: %+v", v)
	}
	plain, _ := child(t, dir, "-")
	if v := Judge(dir, plain); v.Person || !strings.Contains(v.Why, "no Cohort session") {
		t.Errorf("a program that is no session: %+v", v)
	}
	if v := Judge(dir, 0); v.Person {
		t.Errorf("pid 0: %+v", v)
	}
	if err := Remove(dir, "top"); err != nil {
		t.Fatal(err)
	}
	if v := Judge(dir, os.Getpid()); v.Person {
		t.Errorf("a session whose record is gone: %+v", v)
	}
}

// TestARecordOfAnotherProcessIsNotTrusted: a record naming a pid whose
// process started at another time (the pid was reused, or the record was
// made up) counts for nothing, and a process that runs under a session
// the person started, but is itself recorded as started by the person,
// is still judged by its ancestry.
func TestARecordOfAnotherProcessIsNotTrusted(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(Path(dir, "forged"), []byte(`{"sessionId":"forged","pid":`+itoa(os.Getpid())+`,"procStart":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if v := Judge(dir, os.Getpid()); v.Person {
		t.Errorf("a record with the wrong start time was trusted: %+v", v)
	}
	if err := Write(dir, "top", ""); err != nil {
		t.Fatal(err)
	}
	pid, _ := child(t, dir, "sub")
	// The child's record said startedBy top; overwrite it as if it had
	// lied, keeping its real pid and start time.
	if err := os.WriteFile(Path(dir, "sub"), []byte(`{"sessionId":"sub","pid":`+itoa(pid)+`,"procStart":`+utoa(procStart(pid))+`}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if v := Judge(dir, pid); v.Person || !strings.Contains(v.Why, "runs under session top") {
		t.Errorf("a session under a session, recorded as the person's: %+v", v)
	}
}

func itoa(n int) string    { return strconv.Itoa(n) }
func utoa(n uint64) string { return strconv.FormatUint(n, 10) }
