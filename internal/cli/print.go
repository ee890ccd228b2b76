package cli

import (
	"context"
	"errors"
	"io"
	"iter"
	"strings"

	"github.com/cohort-dev/cohort"
)

// maxStdinPrompt bounds a prompt read from stdin.
const maxStdinPrompt = 10 << 20

// runRoot is print mode: one prompt run to the end on a new session, its
// events printed as they come, the result last.
func runRoot(ctx context.Context, inv *Invocation, o *options, args []string) error {
	if err := o.validate(); err != nil {
		return err
	}
	switch {
	case o.bg.run != "":
		return runBackground(ctx, inv, o, args)
	case o.bg.bg:
		return startBackground(inv, o, args)
	}
	if o.inputFormat == "stream-json" {
		return runStream(ctx, inv, o, args)
	}
	if !o.print {
		return runInteractive(ctx, inv, o, args)
	}
	text := promptArg(inv, args)
	if text == "" && inv.Stdin != nil {
		data, err := io.ReadAll(io.LimitReader(inv.Stdin, maxStdinPrompt))
		if err != nil {
			return usageErr("read the prompt from stdin: %v", err)
		}
		text = strings.TrimSpace(string(data))
	}
	if text == "" {
		return usageErr(`no prompt: pass it as an argument (cohort -p "…") or on stdin`)
	}
	cfg := o.config(inv)
	cfg.StopAfterRun = true
	s, err := cohort.New(ctx, cfg)
	if err != nil {
		return err
	}
	out := newPrinter(inv.Stdout, inv.Stderr, o.outputFormat, o.cfg.Verbose)
	if o.debug != "" {
		out.debug = &debugLog{w: inv.Stderr, filter: newDebugFilter(o.debug)}
	}
	failed, runErr := printRun(ctx, s, text, out.event)
	return finishRun(inv, o, s, out, failed, runErr)
}

// runSessionEvents opens a session, prints the events stream yields from
// it (observe, when set, sees each first) and ends as finishRun does: the
// shape of `cohort dream` and `cohort workflow run|resume`.
func runSessionEvents(ctx context.Context, inv *Invocation, o *options,
	stream func(*cohort.Session) iter.Seq2[cohort.Event, error], observe func(*cohort.Session, cohort.Event)) error {
	if err := o.validate(); err != nil {
		return err
	}
	s, err := cohort.New(ctx, o.config(inv))
	if err != nil {
		return err
	}
	out := newPrinter(inv.Stdout, inv.Stderr, o.outputFormat, o.cfg.Verbose)
	failed := false
	var runErr error
	for ev, err := range stream(s) {
		if err != nil {
			runErr = err
			break
		}
		if observe != nil {
			observe(s, ev)
		}
		out.event(ev)
		if ev.Type == cohort.EventResult {
			failed = ev.IsError
		}
	}
	return finishRun(inv, o, s, out, failed, runErr)
}

// finishRun closes s after a one-shot run printed through out and turns
// how it went into the exit: 1 for a run that failed or could not run.
func finishRun(inv *Invocation, o *options, s *cohort.Session, out *printer, failed bool, runErr error) error {
	o.printedResult = out.results > 0
	if err := s.Close(); err != nil {
		warn(inv, err)
	}
	if runErr != nil {
		return &exitError{code: 1, err: runErr}
	}
	if failed {
		return &exitError{code: 1}
	}
	return nil
}

// printRun runs prompt on s, handing every event to print, and reports
// whether the result was an error.
func printRun(ctx context.Context, s *cohort.Session, prompt string, print func(cohort.Event)) (failed bool, err error) {
	for ev, err := range s.Run(ctx, prompt) {
		if err != nil {
			return true, err
		}
		print(ev)
		if ev.Type == cohort.EventResult {
			failed = ev.IsError
		}
	}
	return failed, nil
}

func warn(inv *Invocation, err error) {
	if err != nil && !errors.Is(err, context.Canceled) {
		io.WriteString(inv.Stderr, "cohort: warning: "+err.Error()+"\n")
	}
}
