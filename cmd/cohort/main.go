// Command cohort is the Cohort CLI: a runtime for teams of coding agents.
package main

import (
	"context"
	"os"

	"github.com/cohort-dev/cohort/internal/cli"
)

func main() {
	closeInheritedFds()
	ctx, stop := cli.SignalContext(context.Background())
	code := cli.Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
