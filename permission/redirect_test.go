package permission

import (
	"strings"
	"testing"
)

// TestRedirectThroughDescriptorPaths is issue 36's escape 3: a redirect
// target starting /dev/fd/ was trusted as "not a file" without being
// cleaned or resolved, so `echo x > /dev/fd/../../../PROJECT/f` (and the
// same with >&, 1<>, or a descriptor opened on a directory) wrote into
// the project with no approval in default, plan and dontAsk modes. A
// /dev/fd path (or any path through a process's /proc entry) is a write
// to a place only the running command knows, unless it is a plain
// standard-output or standard-error duplicate; such a line is never
// read-only.
func TestRedirectThroughDescriptorPaths(t *testing.T) {
	f := newFixture(t)
	up := "/dev/fd/../../.." + f.cwd
	writes := []string{
		"echo x > " + up + "/f",
		"echo x >> " + up + "/f",
		"echo x >& " + up + "/f",
		"echo x &> " + up + "/f",
		"echo x 1<> " + up + "/f",
		"echo x >| " + up + "/f",
		"ls 2> " + up + "/.git/f",
		"echo x > /dev/fd/../../../" + f.home + "/.cache/f",
		"echo x 3<. > /dev/fd/3/f",
		"exec 3<src; echo x > /dev/fd/3/f",
		"echo x 3<src > /proc/self/fd/3/f",
		"echo x > /proc/self/cwd/f",
		"echo x > /proc/thread-self/cwd/f",
		"echo x > /proc/$$/cwd/f",
		"echo x > /dev/stdin",
		"echo x > /dev/fd/0",
		// A file opened for reading on standard output, then reopened for
		// writing through its descriptor path.
		"echo x 1<src/main.go > /dev/fd/1",
		"echo x 3<src/main.go 1<&3 > /dev/stdout",
		"echo x 2<src/main.go 2> /dev/stderr",
		"echo x 3<src/main.go 2>&3 2> /dev/fd/2",
	}
	for _, mode := range []Mode{ModeDefault, ModePlan, ModeDontAsk} {
		c := f.checker(mode)
		for _, line := range writes {
			if d := f.decide(c, bash(line)); d.Behavior == Allow {
				t.Errorf("%s mode: %q was allowed (%s)", mode, line, d.Reason)
			}
			if IsReadOnlyCommand(line) {
				t.Errorf("%q is called read-only", line)
			}
		}
	}
	// Plain duplicates of standard output and error stay harmless.
	c := f.checker(ModeDefault)
	for _, line := range []string{"ls src > /dev/null", "ls src >/dev/stderr", "ls src 2>/dev/fd/1", "ls src >/dev/fd/2 2>&1",
		"ls src 2>&1 >/dev/stdout", "echo hi >&2", "cat < src/main.go > /dev/stdout"} {
		if d := f.decide(c, bash(line)); d.Behavior != Allow {
			t.Errorf("%q: %s (%s), want allow", line, d.Behavior, d.Reason)
		}
	}
}

// TestProcPathsAreNotResolvedInTheChecker: a path through a process's
// /proc entry (/proc/self/cwd, /proc/self/root, /proc/PID/fd/N, and
// /dev/fd, /dev/stdin, which lead there) means what the process that
// opens it sees, not the checker. Such a path is never matched, allowed
// or judged inside the working directories: a Read deny rule cannot be
// stepped around through it, and no read-only verdict rests on it.
func TestProcPathsAreNotResolvedInTheChecker(t *testing.T) {
	f := newFixture(t)
	f.perms(nil, []string{"Read(./secrets/**)"}, nil)
	for _, mode := range []Mode{ModeDefault, ModeBypassPermissions} {
		c := f.checker(mode)
		for _, p := range []string{"/proc/self/cwd/secrets/key", "/proc/self/root" + f.cwd + "/secrets/key",
			"/proc/thread-self/cwd/secrets/key", "/dev/fd/3/secrets/key", "/proc/self/environ"} {
			for _, req := range []Request{read(p), {Tool: "Grep", Input: input("pattern", "k", "path", p), ReadOnly: true},
				{Tool: "Glob", Input: input("pattern", "*", "path", p), ReadOnly: true}, bash("cat " + p)} {
				if d := f.decide(c, req); d.Behavior == Allow {
					t.Errorf("%s mode: %s %s was allowed (%s)", mode, req.Tool, p, d.Reason)
				} else if !strings.Contains(d.Reason, "proc") && d.Behavior == Ask && !d.FailClosed {
					t.Errorf("%s mode: %s %s asks without saying why: %s", mode, req.Tool, p, d.Reason)
				}
			}
		}
	}
}
