package cli

import (
	"github.com/cohort-dev/cohort/flags"
	"github.com/spf13/cobra"
)

func newAgentsCmd(inv *Invocation, o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "agents",
		Short: "List agent definitions, where each comes from, and which one wins",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b, err := loadBase(cmd.Context(), inv, o)
			if err != nil {
				return err
			}
			s := &sess{base: b, teamsOn: b.flags.Bool(flags.AgentTeams)}
			return b.catalog(cmd.Context(), s.toolNames()).Render(inv.Stdout)
		},
	}
}

func newFlagsCmd(inv *Invocation, o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "flags",
		Short: "List feature flags with their values and the source that set each",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b, err := loadBase(cmd.Context(), inv, o)
			if err != nil {
				return err
			}
			return b.flags.Render(inv.Stdout)
		},
	}
}
