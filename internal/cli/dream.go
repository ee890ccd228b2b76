package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/cohort-dev/cohort"
)

// newDreamCmd runs one memory consolidation now and waits for it (the
// gates but the lock are skipped); its events print like print mode's.
func newDreamCmd(inv *Invocation, o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "dream",
		Short: "Consolidate this project's memory now and wait for it (see cohort memory)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDream(cmd.Context(), inv, o)
		},
	}
}

func runDream(ctx context.Context, inv *Invocation, o *options) error {
	if err := o.validate(); err != nil {
		return err
	}
	s, err := cohort.New(ctx, o.config(inv))
	if err != nil {
		return err
	}
	out := newPrinter(inv.Stdout, inv.Stderr, o.outputFormat, o.verbose)
	failed := false
	var runErr error
	for ev, err := range s.Dream(ctx) {
		if err != nil {
			runErr = err
			break
		}
		out.event(ev)
		if ev.Type == cohort.EventResult {
			failed = ev.IsError
		}
	}
	return finishRun(inv, o, s, out, failed, runErr)
}

// newMemoryCmd shows where the project's memory lives and its index.
func newMemoryCmd(inv *Invocation, o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "memory",
		Short: "Show where this project's memory lives and its MEMORY.md index",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cohort.ShowMemory(cmd.Context(), o.config(inv), inv.Stdout)
		},
	}
}
