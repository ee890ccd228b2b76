package cli

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/cohort-dev/cohort/internal/configtrust"
	"github.com/cohort-dev/cohort/internal/ownread"
)

// newConfigCmd is cohort config: for now only trust, which approves a
// configuration file an agent could have written (internal/configtrust).
func newConfigCmd(inv *Invocation, o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Configuration files: approve one that lies where agents could write",
	}
	trust := &cobra.Command{
		Use:   "trust FILE...",
		Short: "Show each file and approve its exact content (a settings file, .mcp.json or agent definition inside a tree agents could write)",
		Long: `A settings file, .mcp.json or agent definition that lies inside a tree an
agent's commands could write (below a project a session ran in, an
additional directory, sandbox.allowWrite) is not obeyed until you approve
it: an agent could have planted it. trust prints each file, then records
the digest of exactly that content; a later change makes it unapproved
again. Read what it prints before you rely on it.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			home := cohortHome(inv)
			if !filepath.IsAbs(home) {
				return usageErr("COHORT_HOME=%q is not an absolute path", home)
			}
			dir := o.config(inv).Dir
			at := configtrust.At(home, inv.Getenv)
			book := configtrust.Open(at)
			for _, a := range args {
				path := a
				if !filepath.IsAbs(path) {
					path = filepath.Join(dir, path)
				}
				data, err := ownread.Config(path, 0)
				if err != nil {
					return fmt.Errorf("cannot approve %s: %w", path, err)
				}
				before := book.Check(configtrust.ConfigDir(path), path, data)
				fmt.Fprintf(inv.Stdout, "----- %s -----\n%s", path, data)
				if len(data) > 0 && data[len(data)-1] != '\n' {
					fmt.Fprintln(inv.Stdout)
				}
				if err := configtrust.Approve(cmd.Context(), at, path, data, time.Now()); err != nil {
					return err
				}
				where := "it lies where no recorded agent could write, so it was obeyed already"
				if v := book.Writable(configtrust.ConfigDir(path)); v != nil && v.Broken == "" {
					where = "it lies inside " + v.Root + ", where agents could write"
				} else if before != nil && before.Broken == "" {
					where = "it appeared or changed while a session could write " + before.Root
				}
				fmt.Fprintf(inv.Stdout, "----- approved this content of %s (%s); a change makes it unapproved again.\n", path, where)
			}
			return nil
		},
	}
	cmd.AddCommand(trust)
	return cmd
}
