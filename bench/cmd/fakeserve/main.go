// Command fakeserve serves the fake Messages API (llm/fakeapi) from its own
// process, so that a benchmark can time the cohort binary without the
// fake's CPU and memory counted in it.
//
//	fakeserve [-script FILE] [-nocache] [-window TOKENS] [-cpuprofile FILE] [-v]
//
// It prints the base URL (http://127.0.0.1:PORT) as the first line of
// stdout; point cohort at it with ANTHROPIC_BASE_URL. Without -script it
// answers with the benchmark policy of bench/scenario, which reads the
// workload from the lead's prompt. It serves until stdin reaches EOF (the
// parent closed it or died) or it gets SIGINT or SIGTERM, then closes the
// server, prints one JSON line — the scenario summary, or for a script the
// request count — and exits 0. Like the real API it refuses a request over
// the model's context window (-window, 200,000 tokens by default), so a
// benchmark run whose lead outgrows the window fails instead of passing on
// a request the API would never have answered.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"

	"github.com/cohort-dev/cohort/bench/scenario"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("fakeserve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	script := fs.String("script", "", "answer from this fakeapi script (YAML or JSON) instead of the benchmark policy")
	noCache := fs.Bool("nocache", false, "turn the prompt-cache simulator off (less work for the fake)")
	verbose := fs.Bool("v", false, "log every request on stderr")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the fake to this file")
	window := fs.Int("window", 200_000, "refuse a request over this many input tokens with the API's \"prompt is too long\" (0: any size)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "fakeserve: unexpected argument %q; see -h\n", fs.Arg(0))
		return 2
	}
	if *window < 0 {
		fmt.Fprintf(stderr, "fakeserve: -window %d must not be negative\n", *window)
		return 2
	}
	cfg := fakeapi.Config{RecordLimit: 8, Cache: fakeapi.CacheConfig{Disabled: *noCache}, ContextWindow: *window}
	if *verbose {
		cfg.Logf = func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }
	}
	var pol *scenario.Policy
	if *script != "" {
		sc, err := fakeapi.LoadScript(*script)
		if err != nil {
			fmt.Fprintf(stderr, "fakeserve: %v\n", err)
			return 2
		}
		cfg.Script = sc
	} else {
		pol = scenario.NewPolicy()
		cfg.Policy = pol.Reply
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintf(stderr, "fakeserve: %v\n", err)
			return 2
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintf(stderr, "fakeserve: %v\n", err)
			return 2
		}
		defer pprof.StopCPUProfile()
	}
	srv, err := fakeapi.Start(cfg)
	if err != nil {
		fmt.Fprintf(stderr, "fakeserve: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, srv.URL)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	eof := make(chan struct{})
	go func() { // ends when stdin does; the process exits right after
		_, _ = io.Copy(io.Discard, stdin)
		close(eof)
	}()
	select {
	case <-ctx.Done():
	case <-eof:
	}
	srv.Close()

	// Requests keeps only the last few records; the last index is the count.
	count := 0
	if recs := srv.Requests(); len(recs) > 0 {
		count = recs[len(recs)-1].Index
	}
	var summary any = struct {
		Requests int `json:"requests"`
	}{count}
	if pol != nil {
		summary = pol.Summary()
	}
	data, err := json.Marshal(summary)
	if err != nil {
		fmt.Fprintf(stderr, "fakeserve: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s\n", data)
	return 0
}
