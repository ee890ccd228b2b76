package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cohort-dev/cohort"
)

// newRewindCmd is `cohort rewind [SESSION] [TURN]`: put the files a
// session's agents changed, its lead's conversation, or both back as they
// were before one of its lead's turns. Without TURN it lists the turns; without SESSION it takes the
// project's latest session with checkpoints. The work is package
// checkpoint's (through cohort.Inspection.Rewind); this only renders.
func newRewindCmd(inv *Invocation, o *options) *cobra.Command {
	var code, conversation, both bool
	var r cohort.RewindRequest
	cmd := &cobra.Command{
		Use:   "rewind [SESSION] [TURN]",
		Short: "Put the files (--code), the conversation (--conversation) or both back as before a turn of a session (lists the turns without TURN)",
		Args:  cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := rewindArgs(args, &r); err != nil {
				return &exitError{code: 2, err: err}
			}
			switch {
			case both || conversation && code:
				r.Mode = "both"
			case conversation:
				r.Mode = "conversation"
			}
			in, err := cohort.Inspect(cmd.Context(), o.config(inv))
			if err != nil {
				return err
			}
			rep, err := in.Rewind(cmd.Context(), r)
			if rep != nil {
				renderRewind(inv.Stdout, rep, r)
			}
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&code, "code", false, "rewind the files (the default)")
	f.BoolVar(&conversation, "conversation", false, "rewind the lead's conversation (the next --resume sends that turn's prefix)")
	f.BoolVar(&both, "both", false, "rewind the files and the conversation")
	f.BoolVar(&r.DryRun, "dry-run", false, "list what would change and change nothing")
	f.BoolVar(&r.Force, "force", false, "overwrite files you changed after the checkpoint")
	f.BoolVar(&r.Protected, "protected", false, "also restore protected paths (settings, hooks, .mcp.json, git files) and the index")
	f.BoolVar(&r.MoveBranch, "move-branch", false, "move a branch that agents committed to back to its commit at the checkpoint")
	return cmd
}

// rewindArgs reads [SESSION] [TURN]: a lone number is a turn.
func rewindArgs(args []string, r *cohort.RewindRequest) error {
	turn := ""
	switch len(args) {
	case 1:
		if _, err := strconv.Atoi(args[0]); err == nil {
			turn = args[0]
		} else {
			r.Session = args[0]
		}
	case 2:
		r.Session, turn = args[0], args[1]
	}
	if turn == "" {
		return nil
	}
	n, err := strconv.Atoi(turn)
	if err != nil || n < 1 {
		return fmt.Errorf("TURN %q: want a turn number from 1 (cohort rewind SESSION lists them)", turn)
	}
	r.Turn = n
	return nil
}

// renderRewind prints a rewind's report.
func renderRewind(w io.Writer, rep *cohort.RewindReport, r cohort.RewindRequest) {
	if r.Turn == 0 {
		fmt.Fprintf(w, "session %s: checkpoints before turns\n", rep.Session)
		for _, t := range rep.Turns {
			fmt.Fprintf(w, "  %3d  %s  %s\n", t.Turn, t.Time.Local().Format("2006-01-02 15:04:05"), oneLine(t.Prompt))
		}
		return
	}
	if rep.Conversation {
		verb := map[bool]string{true: "would go", false: "went"}[r.DryRun]
		fmt.Fprintf(w, "session %s: the conversation %s back to before turn %d (resume it with --resume %s)\n", rep.Session, verb, rep.Turn, rep.Session)
	}
	if !r.Files() {
		return
	}
	verb := map[bool]string{true: "would ", false: ""}[r.DryRun || rep.Done == nil]
	fmt.Fprintf(w, "session %s, files before turn %d:\n", rep.Session, rep.Turn)
	for _, p := range rep.Write {
		fmt.Fprintf(w, "  %srestore %s\n", verb, p)
	}
	for _, p := range rep.Delete {
		fmt.Fprintf(w, "  %sdelete  %s\n", verb, p)
	}
	if len(rep.Write)+len(rep.Delete) == 0 {
		fmt.Fprintln(w, "  no file differs from the checkpoint")
	}
	notes := func(label string, paths []string) {
		for _, p := range paths {
			fmt.Fprintf(w, "  ! %s: %s\n", label, p)
		}
	}
	notes("changed by you after the checkpoint (--force overwrites)", rep.UserEdited)
	notes("protected (restored only with --protected)", rep.Protected)
	notes("not restorable", rep.NotRestorable)
	notes("staged changes in the index (restored only with --protected)", rep.Index)
	for _, b := range rep.Branches {
		fmt.Fprintf(w, "  ! %s gained %d commit(s) since the checkpoint (--move-branch moves it back to %.12s):\n", b.Ref, len(b.Commits), b.To)
		for _, c := range b.Commits {
			fmt.Fprintf(w, "      %s\n", c)
		}
	}
	notes("problem", rep.Problems)
	if rep.Done != nil {
		notes("left", rep.Done.Left)
		for _, m := range rep.Done.Moved {
			fmt.Fprintf(w, "  moved %s\n", m)
		}
	}
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// newCheckpointsCmd is `cohort checkpoints prune`: remove the checkpoints
// the retention setting ("checkpoints": {"keepTurns", "keepDays"}) does not
// keep, with the objects only they needed.
func newCheckpointsCmd(inv *Invocation, o *options) *cobra.Command {
	cmd := &cobra.Command{Use: "checkpoints", Short: "Manage the files' checkpoints that cohort rewind goes back to"}
	cmd.AddCommand(&cobra.Command{
		Use:   "prune",
		Short: "Remove the checkpoints the retention setting does not keep (default: a session's last 100 turns, 30 days)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			in, err := cohort.Inspect(cmd.Context(), o.config(inv))
			if err != nil {
				return err
			}
			msg, err := in.PruneCheckpoints(cmd.Context())
			fmt.Fprintln(inv.Stdout, msg)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			return nil
		},
	})
	return cmd
}
