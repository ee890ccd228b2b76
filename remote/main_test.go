package remote

import (
	"testing"

	"go.uber.org/goleak"
)

// The package's tests call t.Parallel first, each with a NATS server, a
// repository and keys of its own: they mostly wait (for a redelivery
// after the queue's ack wait, for an end that must not come, five seconds
// each). One by one they took 227 s of wall time for 56 s of CPU
// (2026-12-07, -race). Two kinds run alone, before the others: a test
// where a job waits on a worker through heartbeats (a third of the 1.5 s
// ack wait; at load 35-40 on 2 cores, beside another test of the
// process, a late one gave TestKeyattack3RefusalOracle's job to another
// worker in 3 runs of 5, and never in 6 runs one by one), and the junk
// flood (TestKeyattack4JunkFloodBeforeTheResult, most of the package's
// CPU, with a 20 s bound). go test runs GOMAXPROCS parallel tests at
// once; -parallel 6 made even more of them fail under that load. A new
// test should call t.Parallel unless it is of one of those kinds.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
