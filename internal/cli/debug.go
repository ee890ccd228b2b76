package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/internal/clip"
)

// debugLog writes --debug's lines on stderr, one per event of a category
// the filter lets through: "[debug api] lead: …". The hooks category is
// the session's own verbose report ("[hook] PostToolUse CMD exit=0 …" for
// every hook command run, and the team and sandbox reports), which
// Config.Verbose turns on.
type debugLog struct {
	w      io.Writer
	filter *debugFilter
}

func (d *debugLog) printf(cat, who, format string, args ...any) {
	if d == nil || !d.filter.on(cat) {
		return
	}
	fmt.Fprintf(d.w, "[debug %s] %s: %s\n", cat, who, fmt.Sprintf(format, args...))
}

// event logs ev.
func (d *debugLog) event(ev cohort.Event) {
	if d == nil {
		return
	}
	who := "lead"
	if ev.AgentID != "" && ev.ParentToolUseID != "" {
		who = ev.AgentID
	}
	switch {
	case ev.Type == cohort.EventSystem && ev.Subtype == cohort.SubtypeInit:
		d.printf("api", "session", "%s model %s, mode %s, key from %s, cwd %s, tools %s", ev.SessionID, ev.Model,
			ev.PermissionMode, ev.APIKeySource, ev.Cwd, strings.Join(ev.Tools, ","))
	case ev.Type == cohort.EventAssistant && ev.Message != nil:
		m := ev.Message
		if m.Usage != nil {
			d.printf("api", who, "response %s from %s, stop %s, tokens in %d (cache read %d, write %d) out %d", m.ID, m.Model,
				m.StopReason, m.Usage.InputTokens, m.Usage.CacheReadInputTokens, m.Usage.CacheCreationInputTokens, m.Usage.OutputTokens)
		}
		for _, b := range m.Content {
			if b.Type == "tool_use" {
				d.printf("tools", who, "call %s %s %s", b.Name, b.ID, clip.String(string(b.Input), 200))
			}
		}
	case ev.Type == cohort.EventUser && ev.Message != nil:
		for _, b := range ev.Message.Content {
			if b.Type != "tool_result" {
				continue
			}
			var text strings.Builder
			for _, c := range b.Content {
				text.WriteString(c.Text)
			}
			status := "ok"
			if b.IsError {
				status = "error"
			}
			d.printf("tools", who, "result %s %s: %s", b.ToolUseID, status, clip.String(text.String(), 200))
		}
	case ev.Subtype == cohort.SubtypeAPIRetry:
		d.printf("api", who, "%s", ev.Error)
	case ev.Subtype == cohort.SubtypeCompactBoundary:
		d.printf("api", who, "compacted (%s) at %d tokens", ev.Trigger, ev.PreTokens)
	case ev.Subtype == cohort.SubtypeTaskStarted || ev.Subtype == cohort.SubtypeTaskProgress || ev.Subtype == cohort.SubtypeTaskNotification:
		d.printf("tasks", "task "+ev.TaskID, "%s %s %s", ev.Subtype, ev.Status, clip.String(ev.Description+" "+ev.Summary, 160))
	case ev.Subtype == cohort.SubtypeTeam && ev.Team != nil:
		t := ev.Team
		d.printf("team", "team "+t.Team, "%s %s→%s %s", t.Kind, t.From, t.To, clip.String(t.Text, 160))
	case ev.Type == cohort.EventResult:
		for _, p := range ev.PermissionDenials {
			d.printf("permissions", p.AgentID, "denied %s %s: %s", p.ToolName, p.ToolUseID, p.Reason)
		}
		d.printf("api", "session", "result %s after %d turns, %d ms (%d in the API), $%.4f", ev.Subtype, ev.NumTurns,
			ev.DurationMs, ev.DurationAPIMs, ev.TotalCostUSD)
	}
}
