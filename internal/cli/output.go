package cli

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/internal/clip"
)

// printer writes print mode's output from a session's events: stream-json
// is each event's JSON encoding, json the result alone, text the result's
// text (and, with --verbose, a line per tool call, retry, compaction, task
// and team event on stderr).
type printer struct {
	w, errw io.Writer
	format  string
	verbose bool
	// results counts the result events printed.
	results int
	// debug, when set, logs every event (--debug).
	debug *debugLog
}

func newPrinter(w, errw io.Writer, format string, verbose bool) *printer {
	return &printer{w: w, errw: errw, format: format, verbose: verbose}
}

// event prints one event.
func (p *printer) event(ev cohort.Event) {
	if ev.Type == cohort.EventResult {
		p.results++
	}
	p.debug.event(ev)
	switch p.format {
	case "stream-json":
		p.line(ev)
	case "json":
		if ev.Type == cohort.EventResult {
			p.line(ev)
		}
	default:
		if ev.Type == cohort.EventResult {
			if ev.IsError {
				fmt.Fprintf(p.errw, "cohort: %s\n", ev.Result)
			} else {
				fmt.Fprintln(p.w, ev.Result)
			}
			if line := denialSummary(ev.PermissionDenials); line != "" {
				fmt.Fprintln(p.errw, line)
			}
			return
		}
		if ev.Subtype == cohort.SubtypeAPIRetry { // said at once, verbose or not: a dead API is not silence
			fmt.Fprintf(p.errw, "cohort: %s\n", ev.Error)
			return
		}
		if p.verbose {
			p.verboseLine(ev)
		}
	}
}

func (p *printer) line(ev cohort.Event) {
	data, err := json.Marshal(ev)
	if err != nil {
		data, _ = json.Marshal(map[string]string{"type": "error", "error": err.Error()})
	}
	p.w.Write(append(data, '\n'))
}

// verboseLine is text mode's --verbose report of ev on stderr.
func (p *printer) verboseLine(ev cohort.Event) {
	who := "lead"
	if ev.ParentToolUseID != "" {
		who = ev.AgentID
	}
	switch {
	case ev.Type == cohort.EventAssistant && ev.Message != nil:
		for _, b := range ev.Message.Content {
			if b.Type == "tool_use" {
				fmt.Fprintf(p.errw, "[%s] %s %s\n", who, b.Name, clip.String(string(b.Input), 120))
			}
		}
	case ev.Subtype == cohort.SubtypeCompactBoundary:
		fmt.Fprintf(p.errw, "[%s] compacted the conversation (%d tokens before)\n", who, ev.PreTokens)
	case ev.Subtype == cohort.SubtypeTaskStarted || ev.Subtype == cohort.SubtypeTaskNotification:
		fmt.Fprintf(p.errw, "[task %s] %s %s\n", ev.TaskID, ev.Subtype, clip.String(ev.Description+ev.Summary, 100))
	case ev.Subtype == cohort.SubtypeTeam && ev.Team != nil:
		t := ev.Team
		fmt.Fprintf(p.errw, "[team %s] %s %s→%s %s\n", t.Team, t.Kind, t.From, t.To, clip.String(t.Text, 100))
	}
}
