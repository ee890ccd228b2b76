//go:build race

package fakeapi

// raceEnabled is true in -race builds, whose per-goroutine cost is several
// times higher; the heaviest tests scale down under it.
const raceEnabled = true
