package tasklist

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// oneLine folds line breaks so that a subject stays on its line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// listLine renders a task as one TaskList line:
//
//	#2 in_progress (alice): Write the parser [blocked by #1]
func listLine(t *Task) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%s %s", t.ID, t.Status)
	if t.Owner != "" {
		fmt.Fprintf(&b, " (%s)", t.Owner)
	}
	fmt.Fprintf(&b, ": %s", oneLine(t.Subject))
	if t.Blocked() {
		fmt.Fprintf(&b, " [blocked by %s]", hashIDs(t.OpenBlockers))
	}
	return b.String()
}

func hashIDs(ids []string) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = "#" + id
	}
	return strings.Join(parts, ", ")
}

// renderList renders TaskList's result; bad holds errors for unreadable
// task files.
func renderList(tasks []Task, bad error) string {
	var lines []string
	for i := range tasks {
		lines = append(lines, listLine(&tasks[i]))
	}
	if len(lines) == 0 {
		lines = append(lines, "No tasks yet.")
	}
	if bad != nil {
		lines = append(lines, "Unreadable task files (not listed above):")
		for _, e := range unjoin(bad) {
			lines = append(lines, "- "+e.Error())
		}
	}
	return strings.Join(lines, "\n")
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// renderTask renders TaskGet's result.
func renderTask(t *Task) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Task #%s: %s\nStatus: %s\n", t.ID, oneLine(t.Subject), t.Status)
	owner := t.Owner
	if owner == "" {
		owner = "none"
	}
	fmt.Fprintf(&b, "Owner: %s\n", owner)
	if t.ActiveForm != "" {
		fmt.Fprintf(&b, "Active form: %s\n", oneLine(t.ActiveForm))
	}
	if len(t.BlockedBy) > 0 {
		parts := make([]string, len(t.BlockedBy))
		for i, id := range t.BlockedBy {
			state := "done"
			if slices.Contains(t.OpenBlockers, id) {
				state = "open"
			}
			parts[i] = fmt.Sprintf("#%s (%s)", id, state)
		}
		fmt.Fprintf(&b, "Blocked by: %s\n", strings.Join(parts, ", "))
	}
	if len(t.Blocks) > 0 {
		fmt.Fprintf(&b, "Blocks: %s\n", hashIDs(t.Blocks))
	}
	if len(t.Metadata) > 0 {
		if data, err := json.Marshal(t.Metadata); err == nil {
			fmt.Fprintf(&b, "Metadata: %s\n", data)
		}
	}
	desc := strings.TrimSpace(t.Description)
	if desc == "" {
		desc = "(none)"
	}
	fmt.Fprintf(&b, "Description:\n%s", desc)
	return b.String()
}
