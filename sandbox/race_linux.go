package sandbox

import (
	"os"
	"strings"
)

// launcherRaceOptions is the GORACE of a race-enabled build's launcher (the
// tests build with -race; a release build passes nothing): the caller's
// race options, with atexit_sleep_ms=0 unless they set it. The race
// runtime otherwise sleeps a second before a program exits, so that
// goroutines still running may report, and every Close waits that second
// out: it was half of the time of the tests that open sessions. The
// launcher's exit status is never looked at, so the sleep bought nothing;
// a race in the launcher is still reported on stderr when it happens.
func launcherRaceOptions() string {
	v := os.Getenv("GORACE")
	if !strings.Contains(v, "atexit_sleep_ms=") {
		v = strings.TrimSpace(v + " atexit_sleep_ms=0")
	}
	return v
}
