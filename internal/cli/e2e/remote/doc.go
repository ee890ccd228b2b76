// Package remote holds the command line's end-to-end tests of remote agents
// on NATS workers: jobs, their commits, a worker's policy, a killed worker,
// a restarted server, bad input from either side, a workflow step on a
// worker. It has tests only; the harness is internal/clitest.
package remote
