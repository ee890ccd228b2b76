package crew

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/cohort-dev/cohort/internal/clip"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/task"
)

// killedActivities is how many of a killed agent's last tool calls its
// notification names.
const killedActivities = 5

// KilledResult is the <result> of the notification for an agent task that
// died with an earlier process of its session (task.Registry.NotifyKilled):
// what the agent had last said and its last tool calls, in words, read
// from its output file (its transcript, one JSON entry a line). The model
// never sees the file's JSON. ok is false for a task that is not an
// agent's, whose output is plain text.
func KilledResult(p task.Pending) (result string, ok bool) {
	switch p.Kind {
	case task.KindLocalAgent, task.KindTeammate:
	default:
		return "", false
	}
	f, err := os.Open(p.OutputFile)
	if err != nil {
		return fmt.Sprintf("What it did cannot be told: its transcript cannot be read (%v).", err), true
	}
	defer f.Close()
	var last string
	var calls []string
	bad := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for sc.Scan() {
		var e struct {
			Type    string       `json:"type"`
			Message *llm.Message `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			bad++
			continue
		}
		if e.Type != "assistant" || e.Message == nil {
			continue
		}
		if text := strings.TrimSpace(llm.JoinText(e.Message.Content)); text != "" {
			last = text
		}
		for _, u := range e.Message.ToolUses() {
			call := u.Name
			if what := activity(u.Input); what != "" {
				call += " (" + what + ")"
			}
			calls = append(calls, call)
		}
	}
	var b strings.Builder
	switch {
	case sc.Err() != nil:
		fmt.Fprintf(&b, "Its transcript could not be read to the end (%v). ", sc.Err())
	case bad > 0:
		fmt.Fprintf(&b, "%d line(s) of its transcript could not be read. ", bad)
	}
	if last == "" {
		b.WriteString("It had written nothing yet.")
	} else {
		b.WriteString("Its last message:\n" + clip.String(last, 2000))
	}
	if n := len(calls); n > 0 {
		from := max(n-killedActivities, 0)
		fmt.Fprintf(&b, "\nIts last tool calls (%d in all): %s.", n, strings.Join(calls[from:], "; "))
	} else {
		b.WriteString("\nIt had made no tool calls.")
	}
	return b.String(), true
}
