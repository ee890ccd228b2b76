package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cohort-dev/cohort"
)

// newWorkflowCmd is `cohort workflow`: run a workflow script without a
// conversation (no lead model is asked anything), resume a run from its
// journal, list the saved ones. The scripts run in the cohort-workflow
// program, which must be installed beside cohort or on PATH.
func newWorkflowCmd(inv *Invocation, o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "workflow",
		Short: "Run, resume and list workflow scripts",
	}
	var args string
	run := &cobra.Command{
		Use:   "run NAME|FILE",
		Short: "Run a saved workflow (by name) or a script file and wait for it; its events print like print mode's",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, pos []string) error {
			req := cohort.WorkflowRequest{Script: pos[0]}
			if args != "" {
				if !json.Valid([]byte(args)) {
					return fmt.Errorf("--args is not JSON: %q; give a JSON value, e.g. --args '{\"files\": [\"a.go\"]}'", args)
				}
				req.Args = json.RawMessage(args)
			}
			return runWorkflow(cmd.Context(), inv, o, req)
		},
	}
	run.Flags().StringVar(&args, "args", "", "the script's args, as JSON")
	resume := &cobra.Command{
		Use:   "resume RUN",
		Short: "Resume a workflow run (of this project, e.g. one whose session was killed) from its journal: finished steps are replayed, the rest run",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, pos []string) error {
			return runWorkflow(cmd.Context(), inv, o, cohort.WorkflowRequest{Resume: pos[0]})
		},
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List saved workflows (.claude/workflows and .cohort/workflows, here and in your home directory)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in, err := cohort.Inspect(cmd.Context(), o.config(inv))
			if err != nil {
				return err
			}
			saved, err := in.Workflows(cmd.Context())
			if err != nil {
				return err
			}
			renderWorkflows(inv.Stdout, saved)
			return nil
		},
	}
	cmd.AddCommand(run, resume, list)
	return cmd
}

func runWorkflow(ctx context.Context, inv *Invocation, o *options, req cohort.WorkflowRequest) error {
	stream := func(s *cohort.Session) iter.Seq2[cohort.Event, error] { return s.RunWorkflow(ctx, req) }
	// Say how to resume the run as soon as it has an id.
	observe := func(s *cohort.Session, ev cohort.Event) {
		if ev.Subtype != "task_started" || ev.TaskType != "local_workflow" {
			return
		}
		for _, a := range s.Agents() {
			if a.ID == ev.TaskID && a.Workflow != nil {
				fmt.Fprintf(inv.Stderr, "cohort: workflow run %s started (if it is interrupted: cohort workflow resume %s). %s\n",
					a.Workflow.RunID, a.Workflow.RunID, a.Workflow.Estimate)
			}
		}
	}
	return runSessionEvents(ctx, inv, o, stream, observe)
}

func renderWorkflows(w io.Writer, saved []cohort.SavedWorkflow) {
	if len(saved) == 0 {
		fmt.Fprintln(w, "no saved workflows")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tDESCRIPTION\tPATH")
	for _, s := range saved {
		desc := s.Description
		if s.Err != "" {
			desc = "cannot load: " + s.Err
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name, desc, s.Path)
	}
	_ = tw.Flush()
}
