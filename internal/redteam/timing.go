package redteam

import (
	"fmt"
	"os"
	"strings"
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
