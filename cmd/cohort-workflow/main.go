// Command cohort-workflow hosts Cohort's workflow scripts: it runs the
// JavaScript engine (package workflow, on goja) in a process of its own and
// speaks package host's JSON-lines protocol with the cohort process that
// started it, which spawns every agent the script asks for. Keeping goja
// out of cmd/cohort keeps that binary small (see internal/arch). It is
// started by cohort, not by hand: `cohort-workflow serve` reads one request
// on stdin.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/cohort-dev/cohort/workflow"
	"github.com/cohort-dev/cohort/workflow/host"
)

func main() {
	if len(os.Args) != 2 || os.Args[1] != "serve" {
		fmt.Fprintf(os.Stderr, "usage: %s serve\n\n%s runs workflow scripts for cohort, which starts it and talks to it on stdin and stdout; it is not meant to be run by hand. Run workflows with `cohort workflow run`.\n", host.BinaryName, host.BinaryName)
		os.Exit(2)
	}
	if err := host.Serve(context.Background(), os.Stdin, os.Stdout, workflow.Engine{}); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", host.BinaryName, err)
		os.Exit(1)
	}
}
