package cli

import (
	"context"
	"fmt"
	"io"
	"iter"
	"path/filepath"
	"time"

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
			in, err := cohort.Inspect(cmd.Context(), o.config(inv))
			if err != nil {
				return err
			}
			m, err := in.Memory()
			if err != nil {
				return err
			}
			renderMemory(inv.Stdout, m)
			return nil
		},
	}
}

// renderMemory writes where the project's memory lives and its index as
// an agent would see it.
func renderMemory(w io.Writer, m *cohort.Memory) {
	fmt.Fprintf(w, "Project memory: %s\n", m.Dir)
	if !m.LastConsolidated.IsZero() {
		fmt.Fprintf(w, "Last consolidated: %s\n", m.LastConsolidated.Format(time.RFC3339))
	} else {
		fmt.Fprintln(w, "Last consolidated: never")
	}
	if !m.Found {
		fmt.Fprintf(w, "No %s yet.\n", filepath.Base(m.Index))
		return
	}
	note := ""
	if m.Truncated {
		note = ", over the limits: agents see it truncated"
	}
	fmt.Fprintf(w, "%s (%d lines, %d bytes%s):\n\n%s\n", m.Index, m.Lines, m.Bytes, note, m.Content)
}
