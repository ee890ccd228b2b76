//go:build race

package agentsdk

const raceEnabled = true
