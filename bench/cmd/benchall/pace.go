package main

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/cohort-dev/cohort/bench/trial"
)

// printPace reports the paced workloads: every run's wall time, CPU and
// peak RSS, then per client the medians with their ranges, and cohort's
// median wall time against the minimal client's.
func printPace(w io.Writer, p trial.Pace, all []workloadResult) {
	fmt.Fprintf(w, "At a model's pace: first token %s, %g output tokens a second, %d-byte briefs.\n\n", p.FirstToken, p.TokensPerSecond, p.Brief)
	for _, wr := range all {
		for i, r := range wr.Runs {
			if r.Error != "" {
				fmt.Fprintf(w, "%s run %d: failed: %s\n", wr.Workload.Name, i+1, r.Error)
				continue
			}
			fmt.Fprintf(w, "%s run %d: wall %s, CPU %s, peak RSS %s\n", wr.Workload.Name, i+1,
				dur(time.Duration(r.WallNs)), dur(time.Duration(r.CPUNs)), mbTenth(r.MaxRSS))
		}
	}
	fmt.Fprintln(w, "\n| workload | runs ok | wall median (min–max) | CPU median (min–max) | peak RSS median (min–max) | requests | verified |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, wr := range all {
		good := wr.good()
		verified := "yes"
		if wr.Failed {
			verified = "NO"
		}
		if len(good) == 0 {
			fmt.Fprintf(w, "| %s | 0/%d | – | – | – | – | %s |\n", wr.Workload.Name, len(wr.Runs), verified)
			continue
		}
		var walls, cpus []time.Duration
		var rss []int64
		for _, r := range good {
			walls = append(walls, time.Duration(r.WallNs))
			cpus = append(cpus, time.Duration(r.CPUNs))
			rss = append(rss, r.MaxRSS)
		}
		fmt.Fprintf(w, "| %s | %d/%d | %s (%s–%s) | %s (%s–%s) | %s (%s–%s) | %d | %s |\n",
			wr.Workload.Name, len(good), len(wr.Runs),
			dur(median(walls)), dur(slices.Min(walls)), dur(slices.Max(walls)),
			dur(median(cpus)), dur(slices.Min(cpus)), dur(slices.Max(cpus)),
			mbTenth(median(rss)), mbTenth(slices.Min(rss)), mbTenth(slices.Max(rss)),
			good[0].Summary.Requests, verified)
	}
	for i := 0; i+1 < len(all); i++ {
		a, b := all[i], all[i+1]
		if b.Workload.Name != a.Workload.Name+" (minimal client)" {
			continue
		}
		if ca, cb := medianWall(a), medianWall(b); ca > 0 && cb > 0 {
			fmt.Fprintf(w, "\n%s: cohort's median wall time is %.2f× the minimal client's (%s against %s).\n",
				a.Workload.Name, float64(ca)/float64(cb), dur(ca), dur(cb))
		}
	}
}

func mbTenth(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/(1<<20)) }
