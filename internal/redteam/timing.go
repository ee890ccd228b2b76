package redteam

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// timer records how long each phase of a session took, which
// REDTEAM_TIMING=1 logs: where a session's time goes (the fixture's
// copy, the snapshots, the session itself, the checks).
type timer struct {
	last   time.Time
	phases []string
}

func newTimer() *timer { return &timer{last: time.Now()} }

// mark ends the phase named name.
func (tm *timer) mark(name string) {
	now := time.Now()
	tm.phases = append(tm.phases, fmt.Sprintf("%s %v", name, now.Sub(tm.last).Round(time.Millisecond)))
	tm.last = now
}

// log writes the phases with a note, when REDTEAM_TIMING is set.
func (tm *timer) log(t testing.TB, note string) {
	if os.Getenv("REDTEAM_TIMING") == "" {
		return
	}
	t.Logf("timing: %s; %s", strings.Join(tm.phases, ", "), note)
}

// cpuReport says, when REDTEAM_TIMING is set, how much CPU the test
// process used (the harness, under -race when the tests are) and how much
// the processes it waited for did (the sessions' cohort and everything
// each waited for, the harness's git and cp): the corpus's cost in CPU,
// which unlike its wall time does not depend much on what else the
// machine runs.
func cpuReport() string {
	if os.Getenv("REDTEAM_TIMING") == "" {
		return ""
	}
	var self, children syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &self) != nil || syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children) != nil {
		return ""
	}
	cpu := func(r syscall.Rusage) time.Duration {
		return time.Duration(r.Utime.Nano() + r.Stime.Nano()).Round(time.Millisecond)
	}
	return fmt.Sprintf("redteam timing: CPU of the test process %v, of the processes it waited for %v\n", cpu(self), cpu(children))
}
