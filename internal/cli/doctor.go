package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cohort-dev/cohort/internal/proc"
	"github.com/cohort-dev/cohort/sandbox"
)

// newDoctorCmd reports what the Bash sandbox enforces on this machine,
// with this project's settings: it starts a launcher and sets up the
// policy a session in the working directory would get.
func newDoctorCmd(inv *Invocation, o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Say what the Bash sandbox enforces on this machine",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			b, err := loadBase(cmd.Context(), inv, o)
			if err != nil {
				return err
			}
			s := &sess{base: b, id: "doctor"}
			if err := s.permissions(); err != nil {
				return err
			}
			conf := s.sandboxConfig()
			for _, p := range conf.problems {
				fmt.Fprintf(inv.Stdout, "settings problem: %s\n", p)
			}
			w := inv.Stdout
			fmt.Fprintf(w, "Bash sandbox for %s\n", b.cwd)
			if on, err := s.sandboxOn(conf); err != nil {
				return err
			} else if !on {
				fmt.Fprintf(w, "  the sandbox is OFF (settings %s or --sandbox off): nothing below applies\n", conf.enabledSrc)
			}
			fmt.Fprintf(w, "  pidfd process-group signals (Linux 6.9): %v\n", yesNo(proc.GroupSignals()))
			sb, err := sandbox.New(s.sandboxCfg(conf))
			if err != nil {
				fmt.Fprintf(w, "  NOT available: %v\n", err)
				return nil
			}
			defer sb.Close()
			rep, err := sb.Report(cmd.Context(), b.cwd)
			for _, p := range sb.Problems() {
				fmt.Fprintf(w, "  note: %s\n", p)
			}
			if err != nil {
				fmt.Fprintf(w, "  NOT available: %v\n", err)
				return nil
			}
			fmt.Fprintf(w, "  Landlock ABI: %d\n", rep.Landlock)
			fmt.Fprintf(w, "  user, mount and pid namespaces: %s\n", yesNo(rep.Namespaces))
			fmt.Fprintf(w, "  private TMPDIR: a new directory under %s per session\n", dirOf(sb.TempDir()))
			writable, protected := sb.Writable(b.cwd)
			for _, p := range writable {
				fmt.Fprintf(w, "  writable: %s\n", p)
			}
			for _, p := range protected {
				fmt.Fprintf(w, "  read-only inside them: %s\n", p)
			}
			fmt.Fprint(w, rep.Describe())
			return nil
		},
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func dirOf(p string) string {
	for i := len(p) - 1; i > 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return p
}
