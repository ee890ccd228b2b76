//go:build race

package redteam

// raceEnabled builds the binary with -race when the tests run with it, so
// the build reuses the packages the test binary compiled.
const raceEnabled = true
