package main

import (
	"io"
	"os"
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
	if o.pace != nil {
		t.Fatal("-pace is off by default")
	}
	o, err = parse([]string{"-pace", "-tps", "50", "-brief", "200"}, io.Discard)
	if err != nil || o.pace == nil || *o.pace != (trial.Pace{FirstToken: 500 * time.Millisecond, TokensPerSecond: 50, Brief: 200}) {
		t.Fatalf("parse -pace = %+v, %v", o, err)
	}
	o, err = parse([]string{"-pace", "-variant", "--flag sibling_gate=off", "-floor-args", "--start-at-end"}, io.Discard)
	if err != nil || strings.Join(o.variant, " ") != "--flag sibling_gate=off" || strings.Join(o.floorExtra, " ") != "--start-at-end" {
		t.Fatalf("parse -variant, -floor-args = %+v, %v", o, err)
	}
	exe := t.TempDir() + "/cohort"
	if err := os.WriteFile(exe, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	o, err = parse([]string{"-also", "before=" + exe, "-also", "x=" + exe}, io.Discard)
	if err != nil || len(o.also) != 2 || o.also[0] != (prebuilt{"before", exe}) || o.also[1].name != "x" {
		t.Fatalf("parse -also = %+v, %v", o, err)
	}
	for _, bad := range [][]string{{"-runs", "-1"}, {"-only", "("}, {"stray"}, {"-pace", "-tps", "0"}, {"-pace", "-first-token", "-1s"},
		{"-also", "before"}, {"-also", "=" + exe}, {"-also", "before=" + exe + ".missing"}} {
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

// The paced workloads carry their pace to fakeserve and their brief to the
// lead, and the report lists each run and the medians with ranges.
func TestPace(t *testing.T) {
	ws := trial.Paced(trial.ModelPace)
	if len(ws) != 2 || ws[0].Name != "pace-10x5-brief400" || ws[1].Spec.Agents != 5 || ws[1].Spec.Turns != 2 || ws[1].Spec.Brief != 400 ||
		!ws[0].Floor || strings.Join(ws[0].FakeArgs, " ") != "-first-token 500ms -tps 100" {
		t.Fatalf("paced workloads = %+v", ws)
	}
	w := ws[1]
	fw := w
	fw.Name += " (minimal client)"
	run := func(wall, cpu time.Duration, mb int64) runRecord {
		return runRecord{WallNs: int64(wall), CPUNs: int64(cpu), MaxRSS: mb << 20}
	}
	vw := w
	vw.Name += " (cohort --flag sibling_gate=off)"
	all := []workloadResult{
		{Workload: w, Runs: []runRecord{run(10*time.Second, 400*time.Millisecond, 36), run(11*time.Second, 500*time.Millisecond, 35), run(12*time.Second, 300*time.Millisecond, 37)}},
		{Workload: fw, Runs: []runRecord{run(8*time.Second, 200*time.Millisecond, 16), run(9*time.Second, 210*time.Millisecond, 17), {Error: "exit 1"}}, Failed: true},
		{Workload: vw, Runs: []runRecord{run(17*time.Second, 400*time.Millisecond, 36)}},
	}
	var b strings.Builder
	printPace(&b, trial.ModelPace, all)
	out := b.String()
	for _, want := range []string{
		"At a model's pace: first token 500ms, 100 output tokens a second, 400-byte briefs.",
		"pace-5x2-brief400 run 2: wall 11.00 s, CPU 500 ms, peak RSS 35.0 MB",
		"pace-5x2-brief400 (minimal client) run 3: failed: exit 1",
		"| pace-5x2-brief400 | 3/3 | 11.00 s (10.00 s–12.00 s) | 400 ms (300 ms–500 ms) | 36.0 MB (35.0 MB–37.0 MB) | 0 | yes |",
		"| pace-5x2-brief400 (minimal client) | 2/3 | 8.50 s (8.00 s–9.00 s) |",
		"pace-5x2-brief400: cohort's median wall time is 1.29× the minimal client's (11.00 s against 8.50 s).",
		"pace-5x2-brief400 (cohort --flag sibling_gate=off): cohort's median wall time is 2.00× the minimal client's (17.00 s against 8.50 s).",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
}
