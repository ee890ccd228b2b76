// Command costs prints what each workload of bench/cost is billed for its
// input, on the fake API's prompt-cache simulator, as a Markdown table for
// BENCHMARKS.md:
//
//	go run ./bench/cmd/costs [-runs N] [-teammate-bin PATH] [-only NAME] [-requests] [-client PATH] [-deny TOOLS]
//
// -client PATH runs each workload's lead prompt with another program's
// command line, the one Claude Code and cohort share (-p PROMPT
// --output-format json --allowedTools Bash), against the same fake with
// the same cache simulator and first-token delay: Claude Code's
// claude.exe, to bill it the same way (the workloads whose flags are
// cohort's own, fork and team, are left out).
//
// -deny LS,MultiEdit takes those tools out of every agent's array (deny
// rules naming the whole tool): the price of offering them.
//
// -requests also prints, for the first run of each workload, one line per
// request: who sent it, its turn, the bytes of its tools, system prompt
// and messages, what the last message added, and its usage — where the
// input goes.
// With -teammate-bin (a built cmd/cohort) it adds team-tmux-3x2, the team
// with each teammate in a tmux pane of its own (tmux must be installed).
// Each workload runs N times (default 3) in a fresh project; the table
// shows the median bill and the range. It exits 1 if a run failed or did
// the wrong work.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/bench/cost"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("costs", flag.ContinueOnError)
	fs.SetOutput(stderr)
	runs := fs.Int("runs", 3, "runs per workload")
	only := fs.String("only", "", "bill only the workload of this name")
	bin := fs.String("teammate-bin", "", "a built cohort binary: also bill a team whose teammates run in tmux panes")
	perRequest := fs.Bool("requests", false, "print each request of a workload's first run to stderr")
	client := fs.String("client", "", "run the lead prompt with this client's command line instead of in-process (Claude Code's claude.exe, or a built cohort); only the workloads without cohort-only flags")
	deny := fs.String("deny", "", "comma-separated tools to take out of every agent's array (in-process only): what the bill would be without them")
	if err := fs.Parse(args); err != nil || *runs < 1 {
		return 2
	}
	workloads := slices.Clone(cost.Workloads)
	if *deny != "" {
		for i := range workloads {
			workloads[i].Deny = strings.Split(*deny, ",")
		}
	}
	if *bin != "" {
		workloads = append(slices.Clip(workloads), cost.TmuxTeam(*bin))
	}
	fmt.Fprintln(stdout, "| workload | requests | input | cache written | cache read | billed input-token-equivalents (min–max) | $ at list price |")
	fmt.Fprintln(stdout, "|---|---|---|---|---|---|---|")
	for _, w := range workloads {
		if *only != "" && w.Name != *only || *client != "" && w.Custom != nil {
			continue
		}
		var bills []cost.Bill
		for range *runs {
			dir, err := os.MkdirTemp("", "cohort-cost-")
			if err != nil {
				fmt.Fprintln(stderr, err)
				return 1
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			b, recs, err := cost.RunClient(ctx, dir, w, *client)
			cancel()
			os.RemoveAll(dir)
			if err != nil {
				fmt.Fprintf(stderr, "costs: %v\n", err)
				return 1
			}
			if *perRequest && len(bills) == 0 {
				cost.PrintRequests(stderr, recs)
			}
			bills = append(bills, b)
		}
		slices.SortFunc(bills, func(a, b cost.Bill) int { return int(a.Equivalents() - b.Equivalents()) })
		m := bills[len(bills)/2]
		fmt.Fprintf(stdout, "| %s | %d | %d | %d | %d | %.0f (%.0f–%.0f) | %.4f |\n", w.Name, m.Requests, m.Input, m.Written, m.Read,
			m.Equivalents(), bills[0].Equivalents(), bills[len(bills)-1].Equivalents(), m.USD())
	}
	return 0
}
