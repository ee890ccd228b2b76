// Package bench holds Cohort's benchmarks; BENCHMARKS.md at the repository
// root records the results and the commands that produced them, and
// bench/run.sh refreshes them all.
//
// Go benchmarks (go test -run '^$' -bench NAME ./bench/):
//
//   - QueryLoopTurn, RequestJSON, ResponseSSE, Calibration: one engine turn
//     at 50 KB of history and its parts, in-process, seconds each.
//   - CLI: the end-to-end workloads through cli.Main in this process, for
//     -cpuprofile, -memprofile and -trace (the fake runs in its own
//     process). The 1,000-agent workloads take about a minute per iteration:
//     use -benchtime 1x.
//   - Binary: the same workloads on the real binary, timed from outside.
//
// Benchmarks of the hot paths' parts live with their packages:
// llm/claude's RequestBody and ResponseStream (its request writer and event
// decoder against the SDK's own path) and internal/proc's RunTrue and
// GroupScan (the fixed cost of a command, and the /proc scan older kernels
// pay after each one). bench/run.sh runs them too.
//
// The end-to-end machinery lives in sub-packages: bench/scenario (the
// workloads and the fake's policy that serves and verifies them),
// bench/trial (builds the binaries, runs and measures one trial),
// bench/cmd/fakeserve (the fake Messages API in its own process; -relay
// puts a person in the model's seat, -first-token and -tps give it a
// model's pace) and bench/cmd/benchall (runs every workload, prints the
// table; -pace runs the fan-out at a model's pace, trial.Paced).
// TestRelayPlaysAFanOut runs the CLI against the relay with a goroutine as
// the player.
//
// The package's own code is what the query-loop benchmark needs to measure
// only our CPU:
//
//   - [Replay] is an http.RoundTripper that answers every request with
//     recorded bytes of the fake Messages API's SSE stream, without a server
//     or a socket. With it the real SDK client, SSE parser, accumulator and
//     engine run exactly as against a server, but the process does none of
//     the server's work, so the CPU a benchmark measures is ours.
//   - [History] builds a conversation of a given serialized size shaped like
//     a coding session: prompts, reasoning text, tool calls and sizeable tool
//     results, with every tool_use answered, so the fake accepts it.
//
// Design decisions:
//
//   - The recorded stream is produced by llm/fakeapi itself ([Recorder]), not
//     written by hand, so it has the API's grammar with the fake's
//     fragmentation and pings: the same bytes a test run parses.
//   - Replay drains and closes every request body, as a transport writing to
//     a socket would: building and serializing the request stays in the
//     measured cost.
//   - Go benchmarks only run with -bench; the package's tests are fast
//     checks that the helpers produce what the benchmarks rely on.
package bench
