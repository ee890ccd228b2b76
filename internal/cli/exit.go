package cli

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/internal/clip"
)

// interrupted is the cause of a context a signal cancelled.
type interrupted struct{ sig syscall.Signal }

func (i interrupted) Error() string { return i.sig.String() + " received" }

// SignalContext returns a context that SIGINT and SIGTERM cancel, with the
// signal as its cause: print mode then exits 128 plus the signal's number
// (130 for Ctrl-C), as shells and Claude Code do. stop releases the
// signals.
func SignalContext(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			if sig, ok := s.(syscall.Signal); ok {
				cancel(interrupted{sig})
			} else {
				cancel(context.Canceled)
			}
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(context.Canceled)
	}
}

// signalExit is the exit code for a run a signal stopped: 128+n, or 0
// when no signal did.
func signalExit(ctx context.Context) int {
	var i interrupted
	if errors.As(context.Cause(ctx), &i) {
		return 128 + int(i.sig)
	}
	return 0
}

// argFormat is the --output-format that args ask for, read from the
// arguments themselves: a start-up error can come before (or from) the
// flag parser, and a script asking for JSON still wants a JSON result.
func argFormat(args []string) string {
	format := "text"
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if v, ok := strings.CutPrefix(a, "--output-format="); ok {
			format = v
		} else if a == "--output-format" && i+1 < len(args) {
			format = args[i+1]
			i++
		}
	}
	return format
}

// startupResult prints, in the json and stream-json formats, the result
// of a run that failed before it began (no API key, a bad flag): an error
// result carrying err, so that a script reading stdout learns why.
func startupResult(w io.Writer, format string, err error) {
	if format != "json" && format != "stream-json" {
		return
	}
	ev := cohort.Event{Type: cohort.EventResult, Subtype: "error_during_execution", IsError: true,
		Result: err.Error(), UUID: newUUID(), Time: time.Now()}
	newPrinter(w, io.Discard, format, false).line(ev)
}

// newUUID is a random (version 4) UUID, the result's uuid.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// denialSummary is text mode's line on stderr after a run in which the
// permission checks refused tool calls: how many, of which tools, the
// first reason, and how to allow them.
func denialSummary(denials []cohort.PermissionDenial) string {
	if len(denials) == 0 {
		return ""
	}
	var tools []string
	count := map[string]int{}
	for _, d := range denials {
		if count[d.ToolName] == 0 {
			tools = append(tools, d.ToolName)
		}
		count[d.ToolName]++
	}
	parts := make([]string, len(tools))
	for i, t := range tools {
		parts[i] = fmt.Sprintf("%s ×%d", t, count[t])
	}
	calls := "calls were"
	if len(denials) == 1 {
		calls = "call was"
	}
	return fmt.Sprintf("cohort: %d tool %s denied (%s; first: %s); to allow them, pass --allowedTools %q or add them to permissions.allow in the settings",
		len(denials), calls, strings.Join(parts, ", "), clip.String(denials[0].Reason, 160), strings.Join(tools, " "))
}
