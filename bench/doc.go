// Package bench holds Cohort's benchmarks: Go benchmarks of the hot paths
// (go test -run '^$' -bench . ./bench/) and, in sub-packages, the
// end-to-end workloads that time the cohort binary from outside
// (bench/cmd/benchall, bench/run.sh). BENCHMARKS.md at the repository root
// records the results and the commands that produced them.
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
//   - The recorded stream is produced by llm/fakeapi itself (Record), not
//     written by hand, so it has the API's grammar with the fake's
//     fragmentation and pings: the same bytes a test run parses.
//   - Replay drains and closes every request body, as a transport writing to
//     a socket would: building and serializing the request stays in the
//     measured cost.
//   - Go benchmarks only run with -bench; the package's tests are fast
//     checks that the helpers produce what the benchmarks rely on.
package bench
