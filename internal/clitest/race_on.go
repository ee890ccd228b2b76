//go:build race

package clitest

// RaceEnabled is whether the tests run with -race: the binaries they build
// (internal/testbin) are built with it too, so that the builds reuse the
// packages the race-enabled test run already compiled.
const RaceEnabled = true
