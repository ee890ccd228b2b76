// Command fakeserve serves the fake Messages API (llm/fakeapi) from its own
// process, so that a benchmark can time the cohort binary without the
// fake's CPU and memory counted in it.
//
//	fakeserve [-script FILE | -relay DIR [-relay-timeout D]] [-first-token D] [-tps N]
//	          [-nocache] [-window TOKENS] [-cpuprofile FILE] [-v]
//	fakeserve relay answer [-dir DIR] N FILE
//
// It prints the base URL (http://127.0.0.1:PORT) as the first line of
// stdout; point cohort at it with ANTHROPIC_BASE_URL. Without -script or
// -relay it answers with the benchmark policy of bench/scenario, which reads
// the workload from the lead's prompt. It serves until stdin reaches EOF (the
// parent closed it or died) or it gets SIGINT or SIGTERM, then closes the
// server, prints one JSON line — the scenario summary, or for a script the
// request count — and exits 0. Like the real API it refuses a request over
// the model's context window (-window, 200,000 tokens by default), so a
// benchmark run whose lead outgrows the window fails instead of passing on
// a request the API would never have answered.
//
// -first-token and -tps stream every reply at a model's pace: the first
// token after that delay, then that many output tokens a second (see
// llm/fakeapi's Config.FirstTokenDelay and OutputTokensPerSecond).
//
// -relay DIR lets a person, or another agent, play the model
// (llm/fakeapi/relay; doc/relay.md is the guide): each request is written to
// DIR as a readable view and waits for the answer file the player writes.
// It then serves until SIGINT or SIGTERM only, not stdin's end, so it can
// run in the background of a shell. `fakeserve relay answer N FILE` (FILE
// "-" for stdin) writes request N's answer whole and prints the relay's
// verdict: answered, or what to fix (exit 1).
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
	"time"

	"github.com/cohort-dev/cohort/bench/scenario"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/llm/fakeapi/relay"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdin, stdout, stderr)
}

// runContext is run that also stops serving when ctx ends.
func runContext(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "relay" {
		return relayCommand(args[1:], stdin, stdout, stderr)
	}
	fs := flag.NewFlagSet("fakeserve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	script := fs.String("script", "", "answer from this fakeapi script (YAML or JSON) instead of the benchmark policy")
	noCache := fs.Bool("nocache", false, "turn the prompt-cache simulator off (less work for the fake)")
	verbose := fs.Bool("v", false, "log every request on stderr")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the fake to this file")
	window := fs.Int("window", 200_000, "refuse a request over this many input tokens with the API's \"prompt is too long\" (0: any size)")
	relayDir := fs.String("relay", "", "let a player answer each request through files in this directory (see doc/relay.md)")
	relayTimeout := fs.Duration("relay-timeout", 0, "with -relay, fail a request not answered in this time as overloaded (0: wait as long as the client)")
	firstToken := fs.Duration("first-token", 0, "delay every reply's first token by this much (a model's pace)")
	tps := fs.Float64("tps", 0, "stream every reply at this many output tokens a second, 4 bytes a token (0: at once)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "fakeserve: unexpected argument %q; see -h\n", fs.Arg(0))
		return 2
	}
	if msg := checkFlags(*window, *firstToken, *tps, *script, *relayDir, *relayTimeout); msg != "" {
		fmt.Fprintf(stderr, "fakeserve: %s\n", msg)
		return 2
	}
	cfg := fakeapi.Config{RecordLimit: 8, Cache: fakeapi.CacheConfig{Disabled: *noCache}, ContextWindow: *window,
		FirstTokenDelay: *firstToken, OutputTokensPerSecond: *tps}
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }
	if *verbose {
		cfg.Logf = logf
	}
	var pol *scenario.Policy
	switch {
	case *relayDir != "":
		rl, err := relay.New(relay.Config{Dir: *relayDir, Timeout: *relayTimeout, Logf: logf})
		if err != nil {
			fmt.Fprintf(stderr, "fakeserve: %v\n", err)
			return 2
		}
		defer rl.Close() // after the server's Close below: no request is waiting then
		cfg.Policy = rl.Policy
		stdin = nil // a player stops it with a signal; a background job's stdin is not its to read
	case *script != "":
		sc, err := fakeapi.LoadScript(*script)
		if err != nil {
			fmt.Fprintf(stderr, "fakeserve: %v\n", err)
			return 2
		}
		cfg.Script = sc
	default:
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

	waitForStop(ctx, stdin)
	srv.Close()
	return printSummary(srv, pol, stdout, stderr)
}

// waitForStop returns at SIGINT or SIGTERM, when ctx ends, or when stdin
// (if not nil) reaches its end.
func waitForStop(ctx context.Context, stdin io.Reader) {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	eof := make(chan struct{})
	if stdin != nil {
		go func() { // ends when stdin does; the process exits right after
			_, _ = io.Copy(io.Discard, stdin)
			close(eof)
		}()
	}
	select {
	case <-ctx.Done():
	case <-eof:
	}
}

// printSummary prints the closed server's summary line: the scenario's,
// or the request count.
func printSummary(srv *fakeapi.Server, pol *scenario.Policy, stdout, stderr io.Writer) int {
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

// checkFlags returns what is wrong with the flags, "" when nothing is.
func checkFlags(window int, firstToken time.Duration, tps float64, script, relayDir string, relayTimeout time.Duration) string {
	switch {
	case window < 0:
		return fmt.Sprintf("-window %d must not be negative", window)
	case firstToken < 0 || tps < 0:
		return fmt.Sprintf("-first-token %s and -tps %g must not be negative", firstToken, tps)
	case script != "" && relayDir != "":
		return "-script and -relay both decide the replies; give one"
	case relayTimeout < 0:
		return fmt.Sprintf("-relay-timeout %s must not be negative (0 waits as long as the client)", relayTimeout)
	case relayTimeout > 0 && relayDir == "":
		return "-relay-timeout needs -relay DIR"
	}
	return ""
}
