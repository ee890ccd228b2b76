package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cohort-dev/cohort"
)

func newAgentsCmd(inv *Invocation, o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "agents",
		Short: "List agent definitions, where each comes from, and which one wins",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cohort.ListAgents(cmd.Context(), o.config(inv), inv.Stdout)
		},
	}
}

func newFlagsCmd(inv *Invocation, o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "flags",
		Short: "List feature flags with their values and the source that set each",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cohort.ListFlags(cmd.Context(), o.config(inv), inv.Stdout)
		},
	}
}

// newDoctorCmd reports what the Bash sandbox enforces on this machine,
// with this project's settings.
func newDoctorCmd(inv *Invocation, o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Say what the Bash sandbox enforces on this machine",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cohort.Doctor(cmd.Context(), o.config(inv), inv.Stdout)
		},
	}
}

// newTeammateCmd runs one teammate of a team as this process (the tmux
// backend starts it in a pane).
func newTeammateCmd(inv *Invocation, o *options) *cobra.Command {
	var role cohort.Role
	cmd := &cobra.Command{
		Use:    "teammate --team T --name N",
		Short:  "Run one teammate of a team as its own process (started by the lead)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTeammate(cmd.Context(), inv, o, role)
		},
	}
	cmd.Flags().StringVar(&role.Team, "team", "", "team name")
	cmd.Flags().StringVar(&role.Name, "name", "", "member name")
	cmd.Flags().StringVar(&role.Session, "session", "", "the lead's session id (for transcripts)")
	_ = cmd.MarkFlagRequired("team")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

// runTeammate is `cohort teammate`: a teammate session run until the lead
// shuts it down, its progress in text on stdout.
func runTeammate(ctx context.Context, inv *Invocation, o *options, role cohort.Role) error {
	cfg := o.config(inv)
	cfg.Role = role
	s, err := cohort.New(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(inv.Stdout, "cohort teammate %s registered in team %s; working.\n", role.Name, role.Team)
	out := newPrinter(inv.Stdout, inv.Stderr, "text", o.verbose)
	failed, runErr := printRun(ctx, s, "", out.event)
	warn(inv, s.Close())
	if runErr != nil || failed {
		return &exitError{code: 1, err: runErr}
	}
	return nil
}
