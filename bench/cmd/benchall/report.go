package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cohort-dev/cohort/bench/scenario"
	"github.com/cohort-dev/cohort/bench/trial"
)

// facts describe the machine a table was measured on.
type facts struct {
	Date       string `json:"date"`
	CPU        string `json:"cpu"`
	NumCPU     int    `json:"nproc"`
	GoVersion  string `json:"go_version"`
	LoadBefore string `json:"load_before"`
	LoadAfter  string `json:"load_after"`
	// ForkExec is the median time to fork, exec and reap /bin/true, now.
	ForkExec time.Duration `json:"fork_exec_ns"`
	// BashSerial and BashPair are the wall time per `bash -c true` when 40
	// run one at a time and two at a time. On a VM that serialises process
	// creation the pair is no faster, and the better of the two, times a
	// workload's Bash calls, is a floor under its wall time that no agent
	// runtime can go below.
	BashSerial time.Duration `json:"bash_serial_ns"`
	BashPair   time.Duration `json:"bash_pair_ns"`
}

// bashFloor is the wall time n Bash processes need here at least.
func (f facts) bashFloor(n int) time.Duration {
	best := f.BashSerial
	if f.BashPair > 0 && f.BashPair < best {
		best = f.BashPair
	}
	return time.Duration(n) * best
}

func machineFacts(ctx context.Context) facts {
	f := facts{Date: time.Now().UTC().Format(time.RFC3339), CPU: cpuModel(), NumCPU: runtime.NumCPU(),
		GoVersion: runtime.Version(), LoadBefore: loadAverage(), ForkExec: forkExec(ctx)}
	f.BashSerial, f.BashPair = bashSpawn(ctx, 1), bashSpawn(ctx, 2)
	if out, err := exec.CommandContext(ctx, "go", "version").Output(); err == nil {
		f.GoVersion = strings.TrimSpace(string(out)) // the toolchain that built the binaries
	}
	return f
}

func (f facts) print(w io.Writer) {
	fmt.Fprintf(w, "Date: %s\nCPU: %s, nproc %d\nGo: %s\nLoad average before: %s\nfork+exec+wait of /bin/true (median of 20): %s\n",
		f.Date, f.CPU, f.NumCPU, f.GoVersion, f.LoadBefore, f.ForkExec.Round(10*time.Microsecond))
	fmt.Fprintf(w, "bash -c true, wall per process: %s one at a time, %s two at a time\n\n",
		f.BashSerial.Round(10*time.Microsecond), f.BashPair.Round(10*time.Microsecond))
}

func cpuModel() string {
	file, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return runtime.GOARCH
}

func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// forkExec times 20 runs of /bin/true and returns the median.
func forkExec(ctx context.Context) time.Duration {
	var ds []time.Duration
	for range 20 {
		start := time.Now()
		if err := exec.CommandContext(ctx, "/bin/true").Run(); err != nil {
			return 0
		}
		ds = append(ds, time.Since(start))
	}
	return median(ds)
}

// bashSpawn runs 40 `bash -c true` with par of them at a time and returns
// the wall time per process (0 when bash cannot run).
func bashSpawn(ctx context.Context, par int) time.Duration {
	const n = 40
	jobs := make(chan struct{}, n)
	for range n {
		jobs <- struct{}{}
	}
	close(jobs)
	var failed atomic.Bool
	var wg sync.WaitGroup
	start := time.Now()
	for range par {
		wg.Go(func() {
			for range jobs {
				if err := exec.CommandContext(ctx, "bash", "-c", "true").Run(); err != nil {
					failed.Store(true)
				}
			}
		})
	}
	wg.Wait()
	if failed.Load() {
		return 0
	}
	return time.Since(start) / n
}

// runRecord is one run's measurements, as JSON.
type runRecord struct {
	WallNs    int64            `json:"wall_ns"`
	MaxRSS    int64            `json:"max_rss_bytes"`
	CPUNs     int64            `json:"cpu_ns"`
	FakeCPUNs int64            `json:"fake_cpu_ns"`
	Summary   scenario.Summary `json:"summary"`
	Error     string           `json:"error,omitempty"`
}

func runJSON(r trial.Result, err error) runRecord {
	out := runRecord{WallNs: int64(r.Wall), MaxRSS: r.MaxRSS, CPUNs: int64(r.CPU), FakeCPUNs: int64(r.FakeCPU), Summary: r.Summary}
	if err == nil {
		err = r.Check
	}
	if err != nil {
		out.Error = err.Error()
	}
	return out
}

// workloadResult is every run of one workload.
type workloadResult struct {
	Workload trial.Workload `json:"workload"`
	Runs     []runRecord    `json:"runs"`
	Failed   bool           `json:"failed"`
	Errors   []string       `json:"errors,omitempty"`
}

func median[T int64 | time.Duration](xs []T) T {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// good returns the runs without errors.
func (wr workloadResult) good() []runRecord {
	var out []runRecord
	for _, r := range wr.Runs {
		if r.Error == "" {
			out = append(out, r)
		}
	}
	return out
}

func printTable(w io.Writer, f facts, all []workloadResult) {
	fmt.Fprintln(w, "| workload | runs ok | wall median (min–max) | target | bash floor | peak RSS median (max) | target | cohort CPU | fake CPU | requests | max active | verified |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, wr := range all {
		good := wr.good()
		var walls, cpus, fakes []time.Duration
		var rss []int64
		requests, active := 0, 0
		for _, r := range good {
			walls = append(walls, time.Duration(r.WallNs))
			cpus = append(cpus, time.Duration(r.CPUNs))
			fakes = append(fakes, time.Duration(r.FakeCPUNs))
			rss = append(rss, r.MaxRSS)
			requests = r.Summary.Requests
			active = max(active, r.Summary.MaxActive)
		}
		floor := "–"
		if n := wr.Workload.Spec.BashCalls(); n > 0 && f.BashSerial > 0 {
			floor = fmt.Sprintf("%s (%d × bash)", dur(f.bashFloor(n)), n)
		}
		verified := "yes"
		if wr.Failed {
			verified = "NO: " + strings.Join(wr.Errors, "; ")
		}
		if len(good) == 0 {
			fmt.Fprintf(w, "| %s | 0/%d | – | %s | %s | – | %s | – | – | – | – | %s |\n", wr.Workload.Name, len(wr.Runs),
				dur(wr.Workload.TargetWall), floor, mb(wr.Workload.TargetRSS), verified)
			continue
		}
		fmt.Fprintf(w, "| %s | %d/%d | %s (%s–%s) | %s | %s | %s (%s) | %s | %s | %s | %d | %d | %s |\n",
			wr.Workload.Name, len(good), len(wr.Runs),
			dur(median(walls)), dur(slices.Min(walls)), dur(slices.Max(walls)),
			target(wr.Workload.TargetWall, median(walls)), floor,
			mb(median(rss)), mb(slices.Max(rss)),
			targetMB(wr.Workload.TargetRSS, slices.Max(rss)),
			dur(median(cpus)), dur(median(fakes)), requests, active, verified)
	}
	printFloorRatios(w, all)
}

// printFloorRatios says, for each workload measured with its minimal
// client, how many times the client's median wall time cohort's is.
func printFloorRatios(w io.Writer, all []workloadResult) {
	for i := 0; i+1 < len(all); i++ {
		a, b := all[i], all[i+1]
		if !a.Workload.Floor || b.Workload.Name != a.Workload.Name+" (minimal client)" {
			continue
		}
		ca, cb := medianWall(a), medianWall(b)
		if ca > 0 && cb > 0 {
			fmt.Fprintf(w, "\n%s: cohort's median wall time is %.2f× the minimal client's (%s against %s; the target is 1.5×).\n",
				a.Workload.Name, float64(ca)/float64(cb), dur(ca), dur(cb))
		}
	}
}

func medianWall(wr workloadResult) time.Duration {
	var walls []time.Duration
	for _, r := range wr.good() {
		walls = append(walls, time.Duration(r.WallNs))
	}
	return median(walls)
}

func target(t, got time.Duration) string {
	if t == 0 {
		return "–"
	}
	return dur(t) + " " + mark(got <= t)
}

func targetMB(t, got int64) string {
	if t == 0 {
		return "–"
	}
	return mb(t) + " " + mark(got <= t)
}

func mark(ok bool) string {
	if ok {
		return "met"
	}
	return "MISSED"
}

func dur(d time.Duration) string {
	if d >= time.Second {
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
	return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
}

func mb(n int64) string { return fmt.Sprintf("%.0f MB", float64(n)/(1<<20)) }
