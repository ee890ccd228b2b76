//go:build race

package cli

// raceEnabled builds the test binary with -race too, so that it reuses the
// packages the race-enabled test run already compiled.
const raceEnabled = true
