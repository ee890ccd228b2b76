package cli

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cohort-dev/cohort/workflow"
)

// newWorkflowCmd is `cohort workflow`: for now `list`, the saved workflows
// in .claude/workflows and .cohort/workflows below the working directory
// and the home directory. Running one (`run`, `resume`) needs the Workflow
// tool's spawner and comes with it.
func newWorkflowCmd(inv *Invocation, _ *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workflow",
		Short: "Saved workflow scripts",
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List saved workflows (.claude/workflows and .cohort/workflows, here and in your home directory)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cwd, err := inv.Getwd()
			if err != nil {
				return err
			}
			saved, err := workflow.List(cwd, inv.Getenv("HOME"))
			if err != nil {
				return err
			}
			renderWorkflows(inv.Stdout, saved)
			return nil
		},
	}
	cmd.AddCommand(list)
	return cmd
}

func renderWorkflows(w io.Writer, saved []workflow.Saved) {
	if len(saved) == 0 {
		fmt.Fprintln(w, "no saved workflows")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tDESCRIPTION\tPATH")
	for _, s := range saved {
		desc := ""
		if s.Err != nil {
			desc = "cannot load: " + s.Err.Error()
		} else {
			desc = s.Script.Meta.Description
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name, desc, s.Path)
	}
	_ = tw.Flush()
}
