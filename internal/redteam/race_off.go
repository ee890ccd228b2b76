//go:build !race

package redteam

// raceEnabled: see race_on.go.
const raceEnabled = false
