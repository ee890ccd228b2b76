package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/bench/scenario"
	"github.com/cohort-dev/cohort/bench/trial"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []int64
		want int64
	}{{nil, 0}, {[]int64{5}, 5}, {[]int64{9, 1, 5}, 5}, {[]int64{4, 1, 3, 2}, 2}} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestParseFlags(t *testing.T) {
	o, err := parse([]string{"-runs", "2", "-only", "^parallel"}, io.Discard)
	if err != nil || o.runs != 2 || !o.only.MatchString("parallel-10x5") || o.only.MatchString("scale-1000x3-limit32") {
		t.Fatalf("parse = %+v, %v", o, err)
	}
	for _, bad := range [][]string{{"-runs", "-1"}, {"-only", "("}, {"stray"}} {
		if _, err := parse(bad, io.Discard); err == nil {
			t.Errorf("parse(%q) accepted bad flags", bad)
		}
	}
}

func TestTable(t *testing.T) {
	w := trial.Workload{Name: "w", TargetWall: time.Second, TargetRSS: 100 << 20,
		Spec: scenario.Spec{Agents: 4, Turns: 5, Tools: scenario.ToolsBash}}
	ok := workloadResult{Workload: w, Runs: []runRecord{
		{WallNs: int64(800 * time.Millisecond), MaxRSS: 40 << 20},
		{WallNs: int64(1200 * time.Millisecond), MaxRSS: 50 << 20},
		{WallNs: int64(900 * time.Millisecond), MaxRSS: 45 << 20},
		{Error: "exit 1"},
	}, Failed: true, Errors: []string{"exit 1"}}
	var b strings.Builder
	// Two at a time is faster here, so the floor is 20 Bash calls × 4 ms.
	printTable(&b, facts{BashSerial: 6 * time.Millisecond, BashPair: 4 * time.Millisecond}, []workloadResult{ok})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	want := "| w | 3/4 | 900 ms (800 ms–1.20 s) | 1.00 s met | 80 ms (20 × bash) | 45 MB (50 MB) | 100 MB met | 0 ms | 0 ms | 0 | 0 | NO: exit 1 |"
	if d := cmp.Diff(want, lines[len(lines)-1]); d != "" {
		t.Fatalf("table row (-want +got):\n%s", d)
	}
}
