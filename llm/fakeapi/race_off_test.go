//go:build !race

package fakeapi

const raceEnabled = false
