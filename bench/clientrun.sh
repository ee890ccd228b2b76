#!/bin/bash
# bench/clientrun.sh FAKESERVE CLIENT [ARGS...]: one run of the fan-out
# (10 subagents x 5 Bash) by any client with Claude Code's command line,
# against a fakeserve of its own, in a fresh project and home; prints the
# client's wall time, peak RSS and CPU (/usr/bin/time) and what the fake
# counted. ARGS are added to the client's (cohort wants "--cwd"
# "PROJECT"; the word PROJECT is replaced by the project's path). Used for
# Claude Code, which has no --cwd, in BENCHMARKS.md §14:
#   go build -o /tmp/fakeserve ./bench/cmd/fakeserve && go build -o /tmp/cohort ./cmd/cohort
#   bench/clientrun.sh /tmp/fakeserve .../claude-code/bin/claude.exe
#   bench/clientrun.sh /tmp/fakeserve /tmp/cohort --cwd PROJECT
set -eu
fake=$1; client=$2; shift 2
d=$(mktemp -d "${TMPDIR:-/tmp}/clientrun-XXXXXX")
trap 'exec 3>&-; wait; rm -rf "$d"' EXIT
mkdir -p "$d/project" "$d/home"
mkfifo "$d/in"
"$fake" < "$d/in" > "$d/fake.out" 2>&1 &
exec 3> "$d/in" # the fake serves until its stdin ends
for _ in $(seq 100); do [ -s "$d/fake.out" ] && break; sleep 0.1; done
url=$(head -1 "$d/fake.out")
args=()
for a in "$@"; do args+=("${a//PROJECT/$d/project}"); done
prompt=$'bench-lead agents=10 turns=5 per-message=0 background=false tools=bash file=\nBenchmark run: start the agents, wait for all of them, then report.'
cd "$d/project"
env -i HOME="$d/home" COHORT_HOME="$d/home/.cohort" ANTHROPIC_API_KEY=bench ANTHROPIC_BASE_URL="$url" \
	PATH="$PATH" TMPDIR="$d" CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1 \
	/usr/bin/time -f "wall %e s, peak RSS %M KB, CPU %U + %S s" -o "$d/time" \
	"$client" -p "$prompt" --output-format json --allowedTools Bash "${args[@]}" > "$d/out" 2> "$d/err" < /dev/null || true
exec 3>&-
wait
echo "$(basename "$client"): $(cat "$d/time"); fake: $(tail -1 "$d/fake.out")"
