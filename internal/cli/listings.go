package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/internal/clip"
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
	cmd.Flags().StringVar(&role.Siblings, "siblings", "", "the batch of teammates spawned with this one (they start behind the first)")
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

// newSessionsCmd lists the project's sessions: id, last change, cost and
// the first prompt, the newest first (--output-format json: a JSON array).
func newSessionsCmd(inv *Invocation, o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "sessions",
		Short: "List this project's sessions: id, time, cost and first prompt (resume one with --resume ID)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			list, err := cohort.Sessions(cmd.Context(), o.config(inv))
			if err != nil {
				return err
			}
			if o.outputFormat == "json" {
				if list == nil {
					list = []cohort.SessionSummary{}
				}
				data, err := json.MarshalIndent(list, "", "  ")
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(inv.Stdout, "%s\n", data)
				return err
			}
			if len(list) == 0 {
				fmt.Fprintln(inv.Stdout, "no sessions in this project yet")
				return nil
			}
			fmt.Fprintf(inv.Stdout, "%-36s  %-16s  %9s  %s\n", "SESSION", "UPDATED", "COST", "FIRST PROMPT")
			for _, s := range list {
				prompt := strings.Join(strings.Fields(s.FirstPrompt), " ")
				fmt.Fprintf(inv.Stdout, "%-36s  %-16s  %9s  %s\n", s.ID, s.Updated.Local().Format("2006-01-02 15:04"),
					fmt.Sprintf("$%.4f", s.CostUSD), clip.String(prompt, 80))
			}
			return nil
		},
	}
}

// newMCPCmd lists the session's MCP servers and approves project ones.
func newMCPCmd(inv *Invocation, o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "MCP servers: list them with their state and tools, approve the project's",
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "Connect to every MCP server a session here would have and show its state and tools",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cohort.ListMCP(cmd.Context(), o.config(inv), inv.Stdout)
		},
	}
	approve := &cobra.Command{
		Use:   "approve NAME...",
		Short: "Approve project MCP servers (.mcp.json) to start, recorded in .cohort/settings.local.json",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return cohort.ApproveMCP(cmd.Context(), o.config(inv), args, inv.Stdout)
		},
	}
	cmd.AddCommand(list, approve)
	return cmd
}
