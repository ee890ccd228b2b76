//go:build linux && !race

package sandbox

// raceEnabled: this build has the race detector (see launcherRaceOptions).
const raceEnabled = false
