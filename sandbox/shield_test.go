package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Without Landlock and namespaces (an old kernel, emulated by leaving
// them out) nothing but Cohort itself stands between a command and Cohort.
// A hostile command signals Cohort and reads its environment; whatever
// works must be in the report as not enforced, and what the report says
// is enforced must hold. Run as root (where commands are root too and
// dumpable stops nothing) and as another user, the same assertions check
// opposite outcomes.
func TestNoIsolationFallbackReport(t *testing.T) {
	// Readable to ourselves only while dumpable, when not root; an
	// unconfined sandbox made earlier in this process cleared the flag.
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0)
	environ, err := os.ReadFile("/proc/self/environ")
	first, _, _ := bytes.Cut(environ, []byte{0})
	if err != nil || len(first) == 0 {
		t.Fatalf("this test reads its own environment from /proc: %v", err)
	}
	for _, tc := range []struct {
		name     string
		without  []string
		dumpable int
	}{
		{"non-dumpable", []string{"landlock", "namespaces"}, 0},
		{"left dumpable", []string{"landlock", "namespaces", "dumpable"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Cleanup(func() { _ = unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0) }) // for the tests after this one
			usr1 := make(chan os.Signal, 1)
			signal.Notify(usr1, syscall.SIGUSR1)
			defer signal.Stop(usr1)
			e := newEnv(t, Config{Without: tc.without})
			rep, err := e.sb.Report(t.Context(), e.project)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); got != tc.dumpable {
				t.Errorf("Cohort's dumpable flag is %d, want %d", got, tc.dumpable)
			}
			pid := os.Getpid()
			out, _ := e.bash(e.project, fmt.Sprintf(`kill -USR1 %d && echo signal-sent; tr '\0' '\n' < /proc/%d/environ; echo end`, pid, pid))
			if !strings.Contains(out, "end") {
				t.Fatalf("the command did not run:\n%s", out)
			}
			delivered := false
			if strings.Contains(out, "signal-sent") { // kill(2) succeeded: the signal is pending
				select {
				case <-usr1:
					delivered = true
				case <-time.After(30 * time.Second):
					t.Fatal("kill succeeded but SIGUSR1 never arrived")
				}
			}
			exposed := strings.Contains(out, string(first))
			t.Logf("uid %d: signal delivered %v, environment read %v", os.Geteuid(), delivered, exposed)
			t.Logf("report:\n%s", rep.Describe())
			notEnforced, enforced := strings.Join(rep.NotEnforced, "\n"), strings.Join(rep.Enforced, "\n")
			if said := strings.Contains(notEnforced, "signals are not blocked: commands can signal (stop, kill) Cohort"); said != delivered {
				t.Errorf("a command's signal reached Cohort: %v; the report says signals are not blocked: %v\n%s", delivered, said, rep.Describe())
			}
			if said := strings.Contains(notEnforced, "Cohort's environment (/proc/PID/environ"); said != exposed {
				t.Errorf("a command read Cohort's environment: %v; the report says it can: %v\n%s", exposed, said, rep.Describe())
			}
			if !exposed && !strings.Contains(enforced, "Cohort made itself non-dumpable") {
				t.Errorf("Cohort's environment was not readable, and the report does not say why:\n%s", rep.Describe())
			}
		})
	}
}

// A command that runs outside the sandbox (dangerouslyDisableSandbox, the
// sandbox off, excludedCommands) is Cohort's user, outside any namespace,
// yet cannot read Cohort's environment, where the API keys are: Cohort is
// non-dumpable once it can start such commands, and they are started
// without CAP_SYS_PTRACE, which would let root read it anyway. Left
// dumpable (the control), the same command reads it.
func TestUnconfinedCommandsCannotReadCohort(t *testing.T) {
	// Readable to ourselves only while dumpable, when not root.
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0)
	environ, err := os.ReadFile("/proc/self/environ")
	first, _, _ := bytes.Cut(environ, []byte{0})
	if err != nil || len(first) == 0 {
		t.Fatalf("this test reads its own environment from /proc: %v", err)
	}
	t.Cleanup(func() { _ = unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0) })
	peek := fmt.Sprintf(`tr '\0' '\n' < /proc/%d/environ; head -c 64 /proc/%d/mem >/dev/null && echo read-mem; echo end`, os.Getpid(), os.Getpid())
	for _, tc := range []struct {
		without []string
		exposed bool
	}{{nil, false}, {[]string{"dumpable"}, true}} {
		_ = unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0)
		e := newEnv(t, Config{Unconfined: true, Without: tc.without})
		out, _ := e.bash(e.project, peek)
		if !strings.Contains(out, "end") {
			t.Fatalf("the command did not run:\n%s", out)
		}
		if got := strings.Contains(out, string(first)); got != tc.exposed {
			t.Errorf("without %v: Cohort's environment read by an unconfined command: %v, want %v\n%s", tc.without, got, tc.exposed, out)
		}
		if !tc.exposed && strings.Contains(out, "read-mem") {
			t.Errorf("an unconfined command read Cohort's memory:\n%s", out)
		}
	}
}
