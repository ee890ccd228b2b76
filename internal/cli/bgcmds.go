package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cohort-dev/cohort/bgsession"
	"github.com/cohort-dev/cohort/bgsession/attach"
	"github.com/cohort-dev/cohort/internal/tui"
)

// newAgentsCmd is cohort agents: the sessions of this machine
// (background ones, from package bgsession's registry), or with
// --definitions the agent definitions and where each comes from.
func newAgentsCmd(inv *Invocation, o *options) *cobra.Command {
	var asJSON, all, defs bool
	cmd := &cobra.Command{
		Use:   "agents",
		Short: "The sessions of this machine: a live view on a terminal (attach, start, stop), else a table (--json for scripts; --definitions for agent definitions)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if defs {
				return listDefinitions(cmd.Context(), inv, o)
			}
			dir := ""
			if cmd.Flags().Changed("cwd") {
				dir = o.config(inv).Dir
			}
			if in, out, err := terminal(inv); err == nil && !asJSON {
				o.bg.set = cmd.Flags()
				return runAgentsView(cmd.Context(), inv, o, all, dir, in, out)
			}
			return listSessions(cmd.Context(), inv, asJSON, all, dir)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the sessions as JSON (Claude Code's fields: id, name, sessionId, pid, status, state, cwd, startedAt, …)")
	cmd.Flags().BoolVar(&all, "all", false, "include sessions that have ended (stopped, done, failed, dead)")
	cmd.Flags().BoolVar(&defs, "definitions", false, "list the agent definitions, where each comes from, and which one wins")
	return cmd
}

// listSessions prints the registry's sessions (live ones unless all), only
// those under dir when it is set. Unreadable records are warned about by
// path and skipped.
func listSessions(ctx context.Context, inv *Invocation, asJSON, all bool, dir string) error {
	reg, err := registry(inv)
	if err != nil {
		return err
	}
	recs, errs := reg.Sessions(ctx, all)
	for _, e := range errs {
		fmt.Fprintf(inv.Stderr, "cohort: warning: %v\n", e)
	}
	recs = sessionsUnder(recs, dir)
	if asJSON {
		if recs == nil {
			recs = []bgsession.Record{}
		}
		data, err := json.MarshalIndent(recs, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(inv.Stdout, "%s\n", data)
		return err
	}
	if len(recs) == 0 {
		_, err := fmt.Fprintln(inv.Stdout, "No background sessions. Start one with: cohort --bg \"your prompt\"")
		return err
	}
	tw := tabwriter.NewWriter(inv.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tSTATE\tSTATUS\tCOST\tAGENTS\tACTIVE\tDETAIL")
	for _, r := range recs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t$%.4f\t%d\t%s\t%s\n", r.ID, clipRunes(r.Name, 30), r.State, orDash(r.Status),
			r.CostUSD, r.Agents, ago(r.UpdatedAt), clipRunes(r.Detail, 50))
	}
	return tw.Flush()
}

// sessionsUnder keeps the records whose directory or worktree is under
// dir (all of them when dir is "").
func sessionsUnder(recs []bgsession.Record, dir string) []bgsession.Record {
	if dir == "" {
		return recs
	}
	kept := recs[:0]
	for _, r := range recs {
		if within(r.Cwd, dir) || (r.Worktree != "" && within(r.Worktree, dir)) {
			kept = append(kept, r)
		}
	}
	return kept
}

func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

func ago(ms int64) string {
	if ms == 0 {
		return "-"
	}
	return time.Since(time.UnixMilli(ms)).Round(time.Second).String() + " ago"
}

// findSession resolves a command's id or name part among every record.
func findSession(ctx context.Context, inv *Invocation, query string) (*bgsession.Registry, bgsession.Record, error) {
	reg, err := registry(inv)
	if err != nil {
		return nil, bgsession.Record{}, err
	}
	recs, errs := reg.Sessions(ctx, true)
	for _, e := range errs {
		fmt.Fprintf(inv.Stderr, "cohort: warning: %v\n", e)
	}
	rec, err := bgsession.Find(recs, query)
	if err != nil {
		return nil, rec, &exitError{code: 1, err: err}
	}
	return reg, rec, nil
}

// newStopCmd is cohort stop (SIGTERM, then SIGKILL) or cohort kill.
func newStopCmd(inv *Invocation, kill bool) *cobra.Command {
	use, short := "stop ID", "Stop a background session (it can be reopened later with attach)"
	if kill {
		use, short = "kill ID", "Kill a background session at once (SIGKILL)"
	}
	return &cobra.Command{
		Use: use, Short: short, Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			reg, rec, err := findSession(cmd.Context(), inv, args[0])
			if err != nil {
				return err
			}
			if err := reg.Stop(cmd.Context(), rec, kill); err != nil {
				if errors.Is(err, bgsession.ErrNotRunning) {
					return &exitError{code: 1, err: fmt.Errorf("session %s (%s) is not running (%s)", rec.ID, rec.Name, rec.State)}
				}
				return &exitError{code: 1, err: err}
			}
			_, err = fmt.Fprintf(inv.Stdout, "stopped · %s\n", rec.ID)
			return err
		},
	}
}

// newRmCmd is cohort rm: the record goes, and the worktree with it when
// nothing is lost (or the flags allow the loss); the transcript stays.
func newRmCmd(inv *Invocation) *cobra.Command {
	var ro bgsession.RemoveOptions
	cmd := &cobra.Command{
		Use: "rm ID", Short: "Remove an ended background session from the list, and its worktree when that is safe", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			reg, rec, err := findSession(cmd.Context(), inv, args[0])
			if err != nil {
				return err
			}
			ro.Env = inv.Environ()
			if err := reg.Remove(cmd.Context(), rec, ro); err != nil {
				return &exitError{code: 1, err: err}
			}
			_, err = fmt.Fprintf(inv.Stdout, "removed · %s (its conversation stays: cohort --resume %s)\n", rec.ID, rec.SessionID)
			return err
		},
	}
	cmd.Flags().BoolVar(&ro.DiscardUnpushed, "discard-unpushed", false, "remove the worktree even though it holds commits no other branch has")
	cmd.Flags().BoolVar(&ro.ForceRemoveWorktree, "force-remove-worktree", false, "remove the worktree even though it has modified or untracked files")
	return cmd
}

// logTail is how much of a log cohort logs prints.
const logTail = 64 << 10

// newLogsCmd is cohort logs: the session's recent output; -f follows it
// until the session ends or Ctrl-C.
func newLogsCmd(inv *Invocation) *cobra.Command {
	var follow bool
	cmd := &cobra.Command{
		Use: "logs ID", Short: "Print a background session's recent output (-f to follow)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			reg, rec, err := findSession(cmd.Context(), inv, args[0])
			if err != nil {
				return err
			}
			return printLog(cmd.Context(), inv.Stdout, reg, rec, follow)
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing what the session writes until it ends")
	return cmd
}

func printLog(ctx context.Context, w io.Writer, reg *bgsession.Registry, rec bgsession.Record, follow bool) error {
	f, err := os.Open(rec.LogPath)
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("session %s: %w", rec.ID, err)}
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > logTail {
		if _, err := f.Seek(-logTail, io.SeekEnd); err != nil {
			return err
		}
	}
	if _, err := io.Copy(w, f); err != nil || !follow {
		return err
	}
	// A file says nothing when it grows; look every 100 ms while the
	// session lives.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		if _, err := io.Copy(w, f); err != nil {
			return err
		}
		if cur := reg.Check(ctx, rec); !cur.Alive {
			_, err := io.Copy(w, f)
			return err
		}
	}
}

// newAttachCmd is cohort attach: the terminal UI on a running session,
// through its control socket (package attach; leaving the UI detaches and
// the session goes on, and permission prompts that waited are asked
// here), or on an ended one (stopped, killed, dead) reopened from its
// transcript, in its directory (its worktree, if it has one).
func newAttachCmd(inv *Invocation, o *options) *cobra.Command {
	return &cobra.Command{
		Use: "attach ID", Short: "Open a background session in this terminal (an ended one is reopened from its transcript)", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			reg, rec, err := findSession(cmd.Context(), inv, args[0])
			if err != nil {
				return err
			}
			if rec.Alive {
				return attachLive(cmd.Context(), inv, o, reg, rec)
			}
			if rec.SessionID == "" {
				return &exitError{code: 1, err: fmt.Errorf("session %s (%s) ended before it opened a conversation (%s); see cohort logs %s", rec.ID, rec.Name, rec.Detail, rec.ID)}
			}
			o.cfg.Resume, o.cfg.Continue, o.cfg.Dir = rec.SessionID, false, sessionDir(rec)
			return runInteractive(cmd.Context(), inv, o, nil)
		},
	}
}

func sessionDir(rec bgsession.Record) string {
	if rec.Worktree != "" {
		return rec.Worktree
	}
	return rec.Cwd
}

// attachLive runs the terminal UI on a running background session.
func attachLive(ctx context.Context, inv *Invocation, o *options, reg *bgsession.Registry, rec bgsession.Record) error {
	in, out, err := terminal(inv)
	if err != nil {
		return err
	}
	prompts := tui.NewPrompts()
	cl, err := attach.Dial(ctx, reg.ControlPath(rec.ID), prompts.CanUseTool)
	if err != nil {
		return &exitError{code: 1, err: fmt.Errorf("session %s (%s): %w", rec.ID, rec.Name, err)}
	}
	opts := tui.Options{Session: cl, Prompts: prompts, Mode: cl.Mode(), Model: cl.Model(), Dir: sessionDir(rec),
		Environ: inv.Environ()}
	return tui.Run(ctx, opts, in, out)
}

// newRespawnCmd is cohort respawn: running sessions are stopped and
// started again on this cohort binary, each resuming its conversation in
// its directory under the same id, with the session flags it was started
// with (its record's flags; what ran in their turns is interrupted, as by
// stop).
func newRespawnCmd(inv *Invocation) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use: "respawn [ID] [--all]", Short: "Restart background sessions on this version of cohort, resuming their conversations", Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if all == (len(args) == 1) {
				return usageErr("respawn takes one session's id or name part, or --all")
			}
			reg, err := registry(inv)
			if err != nil {
				return err
			}
			recs, errs := reg.Sessions(cmd.Context(), false)
			for _, e := range errs {
				fmt.Fprintf(inv.Stderr, "cohort: warning: %v\n", e)
			}
			if !all {
				rec, err := bgsession.Find(recs, args[0])
				if err != nil {
					return &exitError{code: 1, err: fmt.Errorf("%w (respawn restarts running sessions; cohort attach reopens an ended one)", err)}
				}
				recs = []bgsession.Record{rec}
			}
			for _, rec := range recs {
				if err := respawn(cmd.Context(), inv, reg, rec); err != nil {
					return &exitError{code: 1, err: err}
				}
				fmt.Fprintf(inv.Stdout, "respawned · %s\n", rec.ID)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "respawn every running background session")
	return cmd
}

// respawn stops rec and starts it again with --resume.
func respawn(ctx context.Context, inv *Invocation, reg *bgsession.Registry, rec bgsession.Record) error {
	if rec.SessionID == "" {
		return fmt.Errorf("session %s has no conversation yet; wait for it to start", rec.ID)
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	if err := reg.Stop(ctx, rec, false); err != nil {
		return err
	}
	cur, err := reg.Read(rec.ID)
	if err != nil {
		return err
	}
	dir := sessionDir(cur)
	args := append([]string{"--bg-run=" + rec.ID, "--cwd", dir}, cur.Flags...)
	_, err = reg.Start(rec.ID, bgsession.StartSpec{Exe: exe, Env: inv.Environ(), Dir: dir, Base: &cur,
		Args: append(args, "--resume", cur.SessionID)})
	return err
}
