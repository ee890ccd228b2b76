package cli

import (
	"context"
	"iter"

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
	return runSessionEvents(ctx, inv, o, func(s *cohort.Session) iter.Seq2[cohort.Event, error] { return s.Dream(ctx) }, nil)
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
