// Command benchall runs Cohort's end-to-end benchmarks and prints a table of
// the results, ready to paste into BENCHMARKS.md.
//
//	go run ./bench/cmd/benchall [-runs N] [-only REGEXP] [-nocache] [-json FILE]
//	go run ./bench/cmd/benchall -pace [-first-token 500ms] [-tps 100] [-brief 400] [-runs N]
//	    [-variant "--flag sibling_gate=off"] [-floor-args --start-at-end]
//	go run ./bench/cmd/benchall -only parallel -also before=/tmp/before/cohort
//
// It builds cmd/cohort and bench/cmd/fakeserve into a temp directory, then
// runs each workload of bench/trial (the cohort binary against fakeserve in
// its own process) several times and reports the median wall time, the
// peak RSS, the CPU time of cohort (with the bash processes it ran) and of
// the fake, and whether every run did the whole workload exactly once. It
// prints the machine's facts first: CPU, core count, Go version, load
// average, how long a fork+exec of /bin/true takes right now, and what a
// `bash -c true` costs one and two at a time, since on a busy machine (or a
// VM that creates processes one at a time) that dominates the Bash-heavy
// workloads; each workload's row shows its "bash floor", its Bash calls
// times that cost. It exits 1 if a run
// failed or did the wrong work; missing a target is reported, not fatal.
//
// -also NAME=BINARY (repeatable) runs a prebuilt cohort binary too, in
// turn with the others run by run, so that two trees are compared under
// the same load (build the other tree's cmd/cohort first). Every binary is
// dropped from the page cache before the first run: a file just written
// by the linker can sit in the page cache in larger pieces, so its runs
// map more of it per page fault and show up to megabytes more peak RSS
// than the same binary read back from disk (how much varies from build to
// build), which is how an installed cohort runs.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/cohort-dev/cohort/bench/trial"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

type options struct {
	runs    int
	only    *regexp.Regexp
	noCache bool
	jsonOut string
	timeout time.Duration
	extra   []string // more cohort arguments (-args)
	// floorExtra are more minclient arguments (-floor-args).
	floorExtra []string
	// variant, when set, also runs cohort with these arguments added
	// (-variant), alternating with the other clients.
	variant []string
	// pace runs the paced workloads at this pace (-pace).
	pace *trial.Pace
	// also are prebuilt cohort binaries run in turn with the others (-also).
	also []prebuilt
}

// prebuilt is a cohort binary given with -also.
type prebuilt struct{ name, path string }

func parse(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("benchall", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{}
	fs.IntVar(&o.runs, "runs", 0, "runs per workload (0: each workload's default)")
	only := fs.String("only", "", "run only the workloads whose name matches this regexp")
	fs.BoolVar(&o.noCache, "nocache", false, "turn off the fake's prompt-cache simulator (less CPU for the fake)")
	fs.StringVar(&o.jsonOut, "json", "", "also write every run's measurements to this file as JSON")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Minute, "deadline of one cohort run")
	extra := fs.String("args", "", `more cohort arguments, space-separated (e.g. "--sandbox off")`)
	floorExtra := fs.String("floor-args", "", `more minclient arguments, space-separated (e.g. "--start-at-end")`)
	variant := fs.String("variant", "", `also run cohort with these arguments added, alternating with the others (e.g. "--flag sibling_gate=off")`)
	pace := fs.Bool("pace", false, "run the fan-out at a model's pace (with cohort and minclient) instead of the default workloads")
	p := trial.ModelPace
	fs.DurationVar(&p.FirstToken, "first-token", p.FirstToken, "with -pace: the fake's first-token delay")
	fs.Float64Var(&p.TokensPerSecond, "tps", p.TokensPerSecond, "with -pace: the fake's output tokens a second")
	fs.IntVar(&p.Brief, "brief", p.Brief, "with -pace: the size in bytes of the lead's Agent prompts")
	fs.Func("also", "NAME=BINARY: also run this prebuilt cohort, in turn with the others (repeatable)", func(v string) error {
		name, path, ok := strings.Cut(v, "=")
		if !ok || name == "" || path == "" {
			return fmt.Errorf("%q is not NAME=BINARY", v)
		}
		if _, err := os.Stat(path); err != nil {
			return err
		}
		o.also = append(o.also, prebuilt{name, path})
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if *pace {
		if p.FirstToken < 0 || p.TokensPerSecond <= 0 || p.Brief < 0 {
			return nil, fmt.Errorf("-pace needs -first-token >= 0, -tps > 0 and -brief >= 0 (got %s, %g, %d)", p.FirstToken, p.TokensPerSecond, p.Brief)
		}
		o.pace = &p
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	re, err := regexp.Compile(*only)
	if err != nil {
		return nil, fmt.Errorf("-only: %w", err)
	}
	o.only = re
	o.extra = strings.Fields(*extra)
	o.floorExtra = strings.Fields(*floorExtra)
	o.variant = strings.Fields(*variant)
	if o.runs < 0 {
		return nil, fmt.Errorf("-runs %d must not be negative", o.runs)
	}
	return o, nil
}

func run(args []string, stdout, stderr io.Writer) int {
	o, err := parse(args, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "benchall: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	fmt.Fprintln(stderr, "benchall: building cohort and fakeserve…")
	bins, err := trial.Build(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "benchall: %v\n", err)
		return 1
	}
	defer bins.Remove()
	cold := []string{bins.Cohort, bins.FakeServe, bins.MinClient}
	for _, a := range o.also {
		cold = append(cold, a.path)
	}
	if err := trial.DropFromPageCache(cold...); err != nil {
		fmt.Fprintf(stderr, "benchall: %v\n", err)
		return 1
	}

	facts := machineFacts(ctx)
	facts.print(stdout)
	trash := &trial.Trash{} // workspaces are deleted after the last run
	defer trash.Empty()
	var all []workloadResult
	failed := false
	workloads := trial.Workloads
	if o.pace != nil {
		workloads = trial.Paced(*o.pace)
	}
	for _, w := range workloads {
		if !o.only.MatchString(w.Name) {
			continue
		}
		for _, wr := range runWorkload(ctx, o, bins, w, trash, stderr) {
			failed = failed || wr.Failed
			all = append(all, wr)
		}
		if ctx.Err() != nil {
			break
		}
	}
	facts.LoadAfter = loadAverage()
	if o.pace != nil {
		printPace(stdout, *o.pace, all)
	} else {
		printTable(stdout, facts, all)
	}
	fmt.Fprintf(stdout, "\nLoad average after: %s\n", facts.LoadAfter)
	if o.jsonOut != "" {
		if err := writeJSON(o.jsonOut, facts, all); err != nil {
			fmt.Fprintf(stderr, "benchall: %v\n", err)
			return 1
		}
	}
	if failed {
		return 1
	}
	return 0
}

// runWorkload runs w the configured number of times; with w.Floor each
// cohort run is followed by a run of the minimal client, whose results come
// second, and with -variant by a run of cohort with the variant's
// arguments, whose results come after, and the -also binaries last.
func runWorkload(ctx context.Context, o *options, bins *trial.Binaries, w trial.Workload, trash *trial.Trash, stderr io.Writer) []workloadResult {
	n := o.runs
	if n == 0 {
		n = w.Runs
	}
	out := []workloadResult{{Workload: w}}
	bin := []string{bins.Cohort}
	args := [][]string{o.extra}
	if w.Floor {
		fw := w
		fw.Name += " (minimal client)"
		fw.TargetWall, fw.TargetRSS = 0, 0
		out = append(out, workloadResult{Workload: fw})
		bin = append(bin, bins.MinClient)
		args = append(args, append(slices.Clone(o.extra), o.floorExtra...))
	}
	if len(o.variant) > 0 {
		vw := w
		vw.Name += " (cohort " + strings.Join(o.variant, " ") + ")"
		out = append(out, workloadResult{Workload: vw})
		bin = append(bin, bins.Cohort)
		args = append(args, append(slices.Clone(o.extra), o.variant...))
	}
	for _, a := range o.also {
		aw := w
		aw.Name += " (" + a.name + ")"
		out = append(out, workloadResult{Workload: aw})
		bin = append(bin, a.path)
		args = append(args, o.extra)
	}
	for i := range n {
		for k := range out {
			wr := &out[k]
			cfg := trial.Config{Cohort: bin[k], FakeServe: bins.FakeServe, Spec: w.Spec,
				MaxConcurrent: w.MaxConcurrent, Timeout: o.timeout, Trash: trash, Args: args[k],
				FakeArgs: slices.Clone(w.FakeArgs)}
			if o.noCache {
				cfg.FakeArgs = append(cfg.FakeArgs, "-nocache")
			}
			res, err := trial.Run(ctx, cfg)
			switch {
			case err != nil:
				wr.Failed = true
				wr.Errors = append(wr.Errors, err.Error())
				fmt.Fprintf(stderr, "benchall: %s run %d: %v\n", wr.Workload.Name, i+1, err)
			case res.Check != nil:
				wr.Failed = true
				wr.Errors = append(wr.Errors, res.Check.Error())
				fmt.Fprintf(stderr, "benchall: %s run %d: %v\n", wr.Workload.Name, i+1, res.Check)
			default:
				fmt.Fprintf(stderr, "benchall: %s run %d/%d: %s, CPU %s, %.1f MB\n", wr.Workload.Name, i+1, n,
					res.Wall.Round(time.Millisecond), res.CPU.Round(time.Millisecond), float64(res.MaxRSS)/(1<<20))
			}
			wr.Runs = append(wr.Runs, runJSON(res, err))
			if ctx.Err() != nil {
				return out
			}
		}
	}
	return out
}

func writeJSON(path string, m facts, all []workloadResult) error {
	data, err := json.MarshalIndent(struct {
		Machine   facts            `json:"machine"`
		Workloads []workloadResult `json:"workloads"`
	}{m, all}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}
