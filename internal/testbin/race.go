package testbin

import (
	"os"
	"strings"
)

// RaceOptions is the GORACE for the race-enabled programs a test starts
// (the cohort binary of Cohort): this process's GORACE with
// atexit_sleep_ms=0 unless it sets that itself. By default the race
// runtime sleeps a second before a program exits, so that goroutines still
// running may report, and a test pays it for every process it starts and
// waits for. A race found before the exit is still reported, and the
// program still exits with the race runtime's failure status (66).
func RaceOptions() string {
	v := os.Getenv("GORACE")
	if strings.Contains(v, "atexit_sleep_ms=") {
		return v
	}
	return strings.TrimSpace(v + " atexit_sleep_ms=0")
}

// UseRaceOptions sets GORACE to RaceOptions in this process's environment,
// for the programs it starts that inherit it (a workflow host, whose
// environment is the test process's). Call it from TestMain, before any
// test runs; only race-enabled programs read GORACE.
func UseRaceOptions() {
	_ = os.Setenv("GORACE", RaceOptions())
}
