package remote

import (
	"testing"

	"go.uber.org/goleak"
)

// Every test of the package but the junk flood
// (TestKeyattack4JunkFloodBeforeTheResult, which says why) calls
// t.Parallel first: each has a NATS server, a repository and keys of its
// own, and mostly waits (for a redelivery after the queue's ack wait, for
// an end that must not come, five seconds each, for heartbeats). One by
// one they took 227 s of wall time for 56 s of CPU (2026-12-07, -race).
// go test runs GOMAXPROCS of them at once; more (-parallel 6) made the
// heartbeat tests fail at load 35 on 2 cores (a starved worker missed
// its ack wait and its job went to another), so the package keeps go
// test's bound. A new test should call t.Parallel too, unless it needs
// the process to itself.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
