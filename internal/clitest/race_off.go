//go:build !race

package clitest

const RaceEnabled = false
