// Command rsspages measures where the fan-out's peak RSS goes: it runs
// prebuilt cohort binaries on the parallel-10x5 workload, interleaved round
// by round, and while each runs it samples the process's resident memory
// and which pages of the binary's own file mapping are present.
//
//	go run ./bench/cmd/rsspages -fake FAKESERVE -runs 10 A=BIN_A B=BIN_B
//	go run ./bench/cmd/rsspages -fake FAKESERVE A=BIN B=BIN@GOGC=off
//	go run ./bench/cmd/rsspages -drop -fake FAKESERVE A=BIN B=BIN
//
// (-drop first drops every binary from the page cache, the condition the
// figures in BENCHMARKS.md are measured in.)
//
// (A binary may be followed by @VAR=VALUE settings added to its
// environment.)
//
// For each binary it prints ru_maxrss (as wait4 reports it, the figure
// benchall prints), the peak RssAnon and RssFile from /proc/PID/status, and
// the pages of the binary's file that were present in the process's page
// tables at any sample (/proc/PID/pagemap, sampled every -every), split by
// ELF section. With -symbols it also attributes those pages to the Go
// packages whose symbols (and, in .gopclntab, whose function records) lie
// on them, and by kind of data (code, .rodata, the pclntab's function
// names, _func records and pc-value tables), so two builds can be compared
// by what their runs touch.
//
// Two modes run nothing. -windows FILE reads function names (one a line:
// for instance the functions a run unwound, from a uprobe on
// runtime.findfunc, perf probe -x BIN 'runtime.findfunc pc=%ax:x64') and
// prints for each binary how many 4 KB pages and 64 KB windows their
// unwinding tables occupy: the kernel maps a faulted file page with its
// 64 KB window, so the windows are what the process pays. -print-cmd
// creates a workspace, leaves it, and prints the first binary's command
// line in it, to run by hand under perf or gdb (with fakeserve's URL put
// in for $URL).
//
// Reading another process's pagemap needs the right to ptrace it (the
// same user, or CAP_SYS_PTRACE for a non-dumpable cohort).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/cohort-dev/cohort/bench/trial"
)

func main() {
	fake := flag.String("fake", "", "the fakeserve binary")
	runs := flag.Int("runs", 10, "runs of each binary, interleaved")
	every := flag.Duration("every", 2*time.Millisecond, "sampling interval")
	symbols := flag.Int("symbols", 0, "also print the resident bytes by kind of data, and the N packages whose resident bytes differ most, between the first two binaries")
	windows := flag.String("windows", "", "with a file of function names (one a line), print for each binary how many 4 KB pages and 64 KB windows hold those functions' unwinding tables, and run nothing")
	unwound := flag.String("unwound", "", "with a file of function names, split the resident pclntab pages into those in a 64 KB window holding one of the functions' tables and the rest")
	drop := flag.Bool("drop", false, "drop every binary from the page cache before the first run (trial.DropFromPageCache), so each is read as an installed one is")
	printArgs := flag.Bool("print-cmd", false, "create a workspace and print the command line of the first binary's run in it (fakeserve's URL as $URL), and run nothing")
	flag.Parse()
	if flag.NArg() == 0 || *fake == "" && *windows == "" && !*printArgs {
		fmt.Fprintln(os.Stderr, "usage: rsspages -fake FAKESERVE [-runs N] NAME=BINARY ...")
		os.Exit(2)
	}
	var builds []*build
	for _, a := range flag.Args() {
		name, bin, ok := strings.Cut(a, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "rsspages: %q is not NAME=BINARY\n", a)
			os.Exit(2)
		}
		bin, envs, _ := strings.Cut(bin, "@")
		var env []string
		if envs != "" {
			env = strings.Split(envs, "@")
		}
		fi, err := os.Stat(bin)
		if err != nil {
			fmt.Fprintln(os.Stderr, "rsspages:", err)
			os.Exit(1)
		}
		builds = append(builds, &build{name: name, path: bin, size: fi.Size(), env: env})
	}
	if *windows != "" {
		funcs := readNames(*windows)
		for _, b := range builds {
			if err := b.load(); err != nil {
				fmt.Fprintln(os.Stderr, "rsspages:", err)
				os.Exit(1)
			}
			p, found := b.windows(funcs, pageSize)
			w, _ := b.windows(funcs, 64<<10)
			fmt.Printf("%s: %d of %d functions found; their tables lie on %d pages (%d KB) and %d 64 KB windows (%d KB)\n", b.name, found, len(funcs), p, p*4, w, w*64)
		}
		return
	}
	if *printArgs {
		w, err := trial.NewWorkspace(trial.Workloads[0].Spec)
		if err != nil {
			fmt.Fprintln(os.Stderr, "rsspages:", err)
			os.Exit(1)
		}
		fmt.Printf("cd %q && env -i %s %q", w.Dir, strings.Join(quote(w.Env("$URL")), " "), builds[0].path)
		fmt.Println(" " + strings.Join(quote(w.Args(0)), " "))
		return
	}
	if *drop {
		paths := []string{*fake}
		for _, b := range builds {
			paths = append(paths, b.path)
		}
		if err := trial.DropFromPageCache(paths...); err != nil {
			fmt.Fprintln(os.Stderr, "rsspages:", err)
			os.Exit(1)
		}
	}
	ctx := context.Background()
	for r := 0; r < *runs; r++ {
		for _, b := range builds {
			s, err := runOnce(ctx, *fake, b, *every)
			if err != nil {
				fmt.Fprintf(os.Stderr, "rsspages: %s run %d: %v\n", b.name, r+1, err)
				os.Exit(1)
			}
			b.samples = append(b.samples, s)
			fmt.Fprintf(os.Stderr, "%s run %d: maxrss %.1f MB, anon %.1f, file %.1f, binary pages %.1f MB\n",
				b.name, r+1, mb(s.maxRSS), mb(s.peakAnon), mb(s.peakFile), mb(int64(s.pages.count())*pageSize))
		}
	}
	// The layouts are read only now: os/exec starts a child with vfork, and
	// the kernel counts the parent's resident set in the child's ru_maxrss.
	for _, b := range builds {
		if err := b.load(); err != nil {
			fmt.Fprintln(os.Stderr, "rsspages:", err)
			os.Exit(1)
		}
	}
	report(os.Stdout, builds, *symbols)
	if *unwound != "" {
		for _, b := range builds {
			b.explain(os.Stdout, readNames(*unwound))
		}
	}
}

func readNames(file string) map[string]bool {
	data, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rsspages:", err)
		os.Exit(1)
	}
	funcs := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			funcs[l] = true
		}
	}
	return funcs
}

func quote(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return out
}

// sample is one run's figures.
type sample struct {
	maxRSS, peakAnon, peakFile int64
	wall                       time.Duration
	pages                      bitmap // pages of the binary's file present at any sample
}

func runOnce(ctx context.Context, fakeBin string, b *build, every time.Duration) (sample, error) {
	var s sample
	w, err := trial.NewWorkspace(trial.Workloads[0].Spec)
	if err != nil {
		return s, err
	}
	defer w.Remove()
	fake, err := trial.StartFake(ctx, fakeBin)
	if err != nil {
		return s, err
	}
	defer fake.Finish()
	cmd := exec.Command(b.path, w.Args(0)...)
	cmd.Env, cmd.Dir = append(w.Env(fake.URL), b.env...), w.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return s, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	s.pages = newBitmap(b.size)
	tick := time.NewTicker(every)
	defer tick.Stop()
	deadline := time.After(2 * time.Minute)
	pid := cmd.Process.Pid
	for {
		select {
		case err := <-done:
			s.wall = time.Since(start)
			if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
				s.maxRSS = ru.Maxrss * 1024
			}
			if err != nil {
				return s, err
			}
			return s, nil
		case <-deadline:
			_ = cmd.Process.Kill()
			<-done
			return s, fmt.Errorf("timed out")
		case <-tick.C:
			anon, file := status(pid)
			s.peakAnon, s.peakFile = max(s.peakAnon, anon), max(s.peakFile, file)
			markPresent(pid, b.path, s.pages)
		}
	}
}

const pageSize = 4096

func mb(n int64) float64 { return float64(n) / (1 << 20) }

// report prints the medians and ranges of each build, and the resident
// bytes of the binary by section (pages present in at least half the runs).
func report(out *os.File, builds []*build, symbols int) {
	fmt.Fprintln(out, "| build | runs | ru_maxrss median (range) | peak RssAnon median (range) | peak RssFile median (range) | binary pages median (range) |")
	fmt.Fprintln(out, "|---|---|---|---|---|---|")
	for _, b := range builds {
		pick := func(f func(sample) int64) string {
			var v []int64
			for _, s := range b.samples {
				v = append(v, f(s))
			}
			sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
			return fmt.Sprintf("%.1f MB (%.1f – %.1f)", mb(median(v)), mb(v[0]), mb(v[len(v)-1]))
		}
		fmt.Fprintf(out, "| %s | %d | %s | %s | %s | %s |\n", b.name, len(b.samples),
			pick(func(s sample) int64 { return s.maxRSS }), pick(func(s sample) int64 { return s.peakAnon }),
			pick(func(s sample) int64 { return s.peakFile }), pick(func(s sample) int64 { return int64(s.pages.count()) * pageSize }))
	}
	fmt.Fprintln(out)
	for _, b := range builds {
		b.common = majority(b.samples, b.size)
	}
	fmt.Fprintln(out, "Resident KB of the binary by section (pages present in at least half the runs):")
	fmt.Fprintln(out)
	secs := map[string]bool{}
	var order []string
	for _, b := range builds {
		for _, sec := range b.sections {
			if !secs[sec.name] {
				secs[sec.name] = true
				order = append(order, sec.name)
			}
		}
	}
	fmt.Fprint(out, "| section |")
	for _, b := range builds {
		fmt.Fprintf(out, " %s |", b.name)
	}
	fmt.Fprintln(out)
	fmt.Fprint(out, "|---|")
	for range builds {
		fmt.Fprint(out, "---|")
	}
	fmt.Fprintln(out)
	for _, name := range order {
		fmt.Fprintf(out, "| %s |", name)
		for _, b := range builds {
			fmt.Fprintf(out, " %d |", b.sectionResident(name)/1024)
		}
		fmt.Fprintln(out)
	}
	if symbols > 0 && len(builds) >= 2 {
		fmt.Fprintln(out)
		comparePackages(out, builds[0], builds[1], symbols)
	}
}

func median(v []int64) int64 {
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}
