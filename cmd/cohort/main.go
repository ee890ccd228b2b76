// Command cohort is the Cohort CLI: a runtime for teams of coding agents.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/cohort-dev/cohort/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
