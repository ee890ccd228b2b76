package clitest

import "os"

// StressEnv, set to anything but "", makes the stress loops (a test that
// repeats one randomised scenario many times) run all their iterations:
// .ci/run's stress step sets it. Otherwise each loop runs the few
// iterations that check what one iteration checks, so that the README's
// test command stays within its time on a small machine; the loops'
// seeds are random either way, so every run tries new cases.
const StressEnv = "COHORT_STRESS"

// Iterations is n when StressEnv is set and quick otherwise.
func Iterations(n, quick int) int {
	if os.Getenv(StressEnv) != "" {
		return n
	}
	return quick
}
