package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cohort-dev/cohort"
)

// newTeamsCmd is `cohort teams`: list the teams under $COHORT_HOME/teams
// with their state, and remove orphaned ones (`rm NAME`, `prune`). The
// logic is package teammate's (Teams, RemoveTeam, Prune); this only renders.
func newTeamsCmd(inv *Invocation, o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "teams",
		Short: "List teams and their state (active: a running session leads it; orphaned: its session ended)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in, err := cohort.Inspect(cmd.Context(), o.config(inv))
			if err != nil {
				return err
			}
			states, err := in.Teams()
			if err != nil {
				return err
			}
			renderTeams(inv.Stdout, states)
			return nil
		},
	}
	var force bool
	rm := &cobra.Command{
		Use:   "rm NAME...",
		Short: "Remove orphaned teams (a team a running session leads is refused)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			failed := 0
			for _, name := range args {
				if err := cohort.RemoveTeam(cmd.Context(), o.config(inv), name, force); err != nil {
					fmt.Fprintf(inv.Stderr, "cohort: %v\n", err)
					failed++
					continue
				}
				fmt.Fprintf(inv.Stdout, "removed %s\n", name)
			}
			if failed > 0 {
				return &exitError{code: 1}
			}
			return nil
		},
	}
	rm.Flags().BoolVar(&force, "force", false, "remove an orphaned team even while some of its teammates still run")
	prune := &cobra.Command{
		Use:   "prune",
		Short: "Remove every orphaned team whose teammates have all stopped",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			removed, err := cohort.PruneTeams(cmd.Context(), o.config(inv))
			for _, n := range removed {
				fmt.Fprintf(inv.Stdout, "removed %s\n", n)
			}
			if len(removed) == 0 {
				fmt.Fprintln(inv.Stdout, "no orphaned teams")
			}
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			return nil
		},
	}
	cmd.AddCommand(rm, prune)
	return cmd
}

func renderTeams(w io.Writer, states []cohort.TeamState) {
	if len(states) == 0 {
		fmt.Fprintln(w, "no teams")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTATE\tLEAD SESSION\tTEAMMATES\tCREATED")
	for _, s := range states {
		state, lead := string(s.Lead.State), s.Lead.SessionID
		if !s.Orphaned() {
			lead = fmt.Sprintf("%s (pid %d)", lead, s.Lead.PID)
		}
		if s.Problem != nil {
			state = "broken"
		}
		var mates []string
		for _, m := range s.Members {
			switch {
			case m.Running:
				mates = append(mates, m.Name+" (running)")
			case m.Active && s.Orphaned():
				mates = append(mates, m.Name+" (gone)")
			case m.Active:
				mates = append(mates, m.Name)
			}
		}
		created := ""
		if !s.CreatedAt.IsZero() {
			created = s.CreatedAt.Local().Format(time.DateTime)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Name, state, orDash(lead), orDash(strings.Join(mates, ", ")), orDash(created))
	}
	tw.Flush()
	for _, s := range states {
		if s.Problem != nil {
			fmt.Fprintf(w, "%s: %v\n", s.Name, s.Problem)
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
