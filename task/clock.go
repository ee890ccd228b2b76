package task

import "time"

// Clock is the registry's source of time. The default is the real clock;
// tests inject their own or run inside a testing/synctest bubble.
// Implementations are safe for concurrent use.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine after d and returns a function
	// that cancels the call, reporting whether it stopped it in time.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}
