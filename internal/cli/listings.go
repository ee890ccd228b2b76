package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/internal/clip"
)

// listDefinitions is cohort agents --definitions.
func listDefinitions(ctx context.Context, inv *Invocation, o *options) error {
	in, err := cohort.Inspect(ctx, o.config(inv))
	if err != nil {
		return err
	}
	return renderAgents(inv.Stdout, in.Agents(ctx))
}

func newFlagsCmd(inv *Invocation, o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "flags",
		Short: "List feature flags with their values and the source that set each",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return listFlags(cmd.Context(), o.config(inv), inv.Stdout)
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
			in, err := cohort.Inspect(cmd.Context(), o.config(inv))
			if err != nil {
				return err
			}
			r, err := in.Sandbox(cmd.Context())
			if err != nil {
				return err
			}
			renderSandbox(inv.Stdout, r)
			return nil
		},
	}
}

// newTeammateCmd runs one teammate of a team as this process (the tmux
// backend starts it in a pane).
func newTeammateCmd(inv *Invocation, o *options) *cobra.Command {
	return &cobra.Command{
		Use:    "teammate FILE",
		Short:  "Run one teammate of a team as its own process (started by the lead, which wrote its configuration to FILE)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTeammate(cmd.Context(), inv, args[0])
		},
	}
}

// runTeammate is `cohort teammate FILE`: a teammate session run until the
// lead shuts it down, its progress in text on stdout. FILE is the
// teammate's Config as its lead wrote it (mode 0600, credentials
// included): read once and removed.
func runTeammate(ctx context.Context, inv *Invocation, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read the teammate's configuration: %w", err)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("remove the teammate's configuration: %w", err)
	}
	var cfg cohort.Config
	if err := json.Unmarshal(data, &cfg); err != nil {
		return fmt.Errorf("the teammate's configuration %s: %w", path, err)
	}
	cfg.Getenv, cfg.Environ, cfg.Stderr = inv.Getenv, inv.Environ, inv.Stderr
	role := cfg.Role
	s, err := cohort.New(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(inv.Stdout, "cohort teammate %s registered in team %s; working.\n", role.Name, role.Team)
	out := newPrinter(inv.Stdout, inv.Stderr, "text", cfg.Verbose)
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
			in, err := cohort.Inspect(cmd.Context(), o.config(inv))
			if err != nil {
				return err
			}
			list, err := in.Sessions()
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
			in, err := cohort.Inspect(cmd.Context(), o.config(inv))
			if err != nil {
				return err
			}
			renderMCP(inv.Stdout, in.MCPServers(cmd.Context()))
			return nil
		},
	}
	approve := &cobra.Command{
		Use:   "approve NAME...",
		Short: "Approve project MCP servers (.mcp.json) to start, recorded in .cohort/settings.local.json",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, err := cohort.ApproveMCP(cmd.Context(), o.config(inv), args)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(inv.Stdout, "Approved %s (recorded in %s).\n", strings.Join(args, ", "), path)
			return err
		},
	}
	cmd.AddCommand(list, approve)
	return cmd
}

// listFlags writes the feature flags a session with cfg would have, with
// their values and the source that set each.
func listFlags(ctx context.Context, cfg cohort.Config, w io.Writer) error {
	in, err := cohort.Inspect(ctx, cfg)
	if err != nil {
		return err
	}
	return renderFlags(w, in.Flags())
}

// renderFlags writes the feature flags, one line each: value, the source
// that set it, default, what it does.
func renderFlags(w io.Writer, flags []cohort.Flag) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FLAG\tVALUE\tSOURCE\tDEFAULT\tDESCRIPTION")
	for _, f := range flags {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", f.Name, f.Value, f.Source, f.Default, f.Description)
	}
	return tw.Flush()
}

// renderAgents writes the agent definitions: where each comes from and
// which one is in force.
func renderAgents(w io.Writer, defs []cohort.AgentDefinition) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSOURCE\tSTATUS\tMODEL\tFILE")
	for _, d := range defs {
		status := "active"
		if !d.Active {
			status = "overridden by " + d.OverriddenBy
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", d.Name, d.Source, status, cmp.Or(d.Model, "inherit"), cmp.Or(d.File, "-"))
	}
	return tw.Flush()
}

// renderSandbox writes what the Bash sandbox enforces on this machine.
func renderSandbox(w io.Writer, r *cohort.SandboxReport) {
	for _, p := range r.Problems {
		fmt.Fprintf(w, "settings problem: %s\n", p)
	}
	fmt.Fprintf(w, "Bash sandbox for %s\n", r.Dir)
	if r.Off {
		fmt.Fprintf(w, "  the sandbox is OFF (settings %s or --sandbox off): nothing below applies\n", r.OffSource)
	}
	fmt.Fprintf(w, "  pidfd process-group signals (Linux 6.9): %v\n", yesNo(r.GroupSignals))
	for _, p := range r.Notes {
		fmt.Fprintf(w, "  note: %s\n", p)
	}
	if r.Unavailable != "" {
		fmt.Fprintf(w, "  NOT available: %s\n", r.Unavailable)
		return
	}
	fmt.Fprintf(w, "  Landlock ABI: %d\n", r.Landlock)
	fmt.Fprintf(w, "  user, mount and pid namespaces: %s\n", yesNo(r.Namespaces))
	fmt.Fprintf(w, "  private TMPDIR: a new directory under %s per session\n", r.TempDir)
	for _, p := range r.Writable {
		fmt.Fprintf(w, "  writable: %s\n", p)
	}
	for _, p := range r.Protected {
		fmt.Fprintf(w, "  read-only inside them: %s\n", p)
	}
	fmt.Fprint(w, r.Enforcement)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// renderMCP writes the MCP servers: state, where each is configured, its
// tools.
func renderMCP(w io.Writer, servers []cohort.MCPServer) {
	if len(servers) == 0 {
		fmt.Fprintln(w, "No MCP servers are configured (.mcp.json, settings mcpServers, --mcp-config).")
		return
	}
	for _, st := range servers {
		fmt.Fprintf(w, "%s: %s (%s, %s)\n", st.Name, st.Status, st.Scope, st.Source)
		if st.Error != "" {
			fmt.Fprintf(w, "  %s\n", st.Error)
		}
		for _, t := range st.Tools {
			fmt.Fprintf(w, "  %s\n", t)
		}
	}
}
