package cli

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/charmbracelet/x/term"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/internal/tui"
)

// terminal is the invocation's stdin and stdout when both are terminals.
func terminal(inv *Invocation) (in, out *os.File, err error) {
	in, inOK := inv.Stdin.(*os.File)
	out, outOK := inv.Stdout.(*os.File)
	if !inOK || !outOK || !term.IsTerminal(in.Fd()) || !term.IsTerminal(out.Fd()) {
		return nil, nil, usageErr(`the interactive session needs a terminal on stdin and stdout; for a script, use print mode: cohort -p "your prompt"`)
	}
	return in, out, nil
}

// runInteractive is cohort without -p: the terminal UI on a long-lived
// session. A prompt on the command line is sent at once.
func runInteractive(ctx context.Context, inv *Invocation, o *options, args []string) error {
	in, out, err := terminal(inv)
	if err != nil {
		return err
	}
	prompts := tui.NewPrompts()
	open := func(ctx context.Context, resume string) (*cohort.Session, error) {
		cfg := o.config(inv)
		cfg.CanUseTool, cfg.AskUser, cfg.ApprovePlan = prompts.CanUseTool, prompts.AskUser, prompts.ApprovePlan
		cfg.PartialMessages, cfg.AutoDream, cfg.Wake = true, true, prompts.Wake
		if resume != "" {
			cfg.Resume, cfg.Continue, cfg.ForkSession, cfg.SessionID = resume, false, false, ""
		}
		return cohort.New(ctx, cfg)
	}
	s, err := open(ctx, "")
	if err != nil {
		return err
	}
	cfg := o.config(inv)
	opts := tui.Options{Session: s, Prompts: prompts, Mode: s.PermissionMode(), Model: s.Model(), Dir: cfg.Dir,
		Prompt: promptArg(inv, args),
		Sessions: func(ctx context.Context) ([]cohort.SessionSummary, error) {
			in, err := cohort.Inspect(ctx, cfg)
			if err != nil {
				return nil, err
			}
			return in.Sessions()
		},
		Resume: func(ctx context.Context, id string) (tui.Session, error) {
			return open(ctx, id)
		},
		Flags:      func(ctx context.Context, w io.Writer) error { return listFlags(ctx, cfg, w) },
		StatusLine: s.StatusLine(),
		RunStatusLine: func(ctx context.Context, ts tui.Session, in []byte) ([]byte, error) {
			s, ok := ts.(*cohort.Session)
			if !ok {
				return nil, errors.New("cohort: the statusLine runs only in a session of package cohort")
			}
			return s.RunStatusLine(ctx, in)
		},
	}
	opts.Environ = inv.Environ()
	return tui.Run(ctx, opts, in, out)
}
