#!/bin/sh
# Refreshes every figure in BENCHMARKS.md: the Go benchmarks of the hot
# paths, then the end-to-end workloads (the cohort binary, timed from
# outside, against fakeserve in its own process). Run from anywhere inside
# the repository; extra arguments go to benchall (e.g. -runs 3, -only parallel).
set -eu
cd "$(dirname "$0")/.."

echo "== machine"
echo "nproc: $(nproc)"
grep -m1 'model name' /proc/cpuinfo || true
go version
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
date -u +%Y-%m-%dT%H:%M:%SZ

echo
echo "== query-loop turn at 50 KB of history (issue 3)"
go test -run '^$' -bench 'QueryLoopTurn|RequestJSON|ResponseSSE|Calibration' -benchtime 3s -count 3 ./bench/

echo
echo "== its parts: request body and event stream (llm/claude), process start and group check (internal/proc)"
go test -run '^$' -bench 'RequestBody|ResponseStream' -benchtime 3s -count 3 ./llm/claude/
go test -run '^$' -bench 'RunTrue|GroupScan' -benchtime 3s -count 3 ./internal/proc/

echo
echo "== mailbox"
go test -run '^$' -bench . -benchtime 3s ./mailbox/

echo
echo "== end to end (issues 4 and 5)"
go run ./bench/cmd/benchall "$@"
