package task

import (
	"fmt"
	"strings"
)

// Notification is what a parent learns when one of its background tasks
// ends. It is enqueued once per task and rendered for the model by XML.
type Notification struct {
	TaskID     string
	Kind       Kind
	ToolUseID  string
	OutputFile string
	Status     Status
	Summary    string
	// Result is the final text; empty leaves the <result> element out.
	Result string
	// Usage is set for agent tasks.
	Usage *Usage
	// WorktreePath and WorktreeBranch name a kept worktree; empty leaves the
	// <worktree> element out.
	WorktreePath   string
	WorktreeBranch string
}

// Usage is a finished task's totals as notifications and events report them.
type Usage struct {
	TotalTokens int64 `json:"total_tokens"`
	ToolUses    int   `json:"tool_uses"`
	DurationMs  int64 `json:"duration_ms"`
}

// XML renders n as the <task-notification> block the parent model reads.
// <tool-use-id> is left out when the task had no tool call (dream tasks);
// <result>, <usage> and <worktree> when they are empty.
// Field text is not escaped — it is prose for a model — but any closing tag
// that could end the block (or the element holding the text) early is
// neutralised to "<\/…", so a result quoting "</task-notification>" stays
// inside its frame.
func (n Notification) XML() string {
	var b strings.Builder
	b.WriteString("<task-notification>\n")
	element(&b, "task-id", n.TaskID)
	if n.ToolUseID != "" {
		element(&b, "tool-use-id", n.ToolUseID)
	}
	element(&b, "output-file", n.OutputFile)
	element(&b, "status", string(n.Status))
	element(&b, "summary", n.Summary)
	if n.Result != "" {
		element(&b, "result", n.Result)
	}
	if u := n.Usage; u != nil {
		fmt.Fprintf(&b, "<usage><total_tokens>%d</total_tokens><tool_uses>%d</tool_uses><duration_ms>%d</duration_ms></usage>\n",
			u.TotalTokens, u.ToolUses, u.DurationMs)
	}
	if n.WorktreePath != "" || n.WorktreeBranch != "" {
		b.WriteString("<worktree>")
		b.WriteString("<worktreePath>" + neutralize(n.WorktreePath, "worktreePath", "worktree") + "</worktreePath>")
		b.WriteString("<worktreeBranch>" + neutralize(n.WorktreeBranch, "worktreeBranch", "worktree") + "</worktreeBranch>")
		b.WriteString("</worktree>\n")
	}
	b.WriteString("</task-notification>")
	return b.String()
}

func element(b *strings.Builder, tag, text string) {
	b.WriteString("<" + tag + ">")
	b.WriteString(neutralize(text, tag))
	b.WriteString("</" + tag + ">\n")
}

// neutralize rewrites "</tag" (ASCII case-insensitive) to "<\/tag" for each
// given tag and for task-notification, leaving everything else untouched.
func neutralize(s string, tags ...string) string {
	tags = append(tags, "task-notification")
	if !strings.Contains(s, "</") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] == '<' && i+1 < len(s) && s[i+1] == '/' && closesAny(s[i+2:], tags) {
			b.WriteString(`<\/`)
			i += 2
			continue
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

func closesAny(rest string, tags []string) bool {
	for _, t := range tags {
		if len(rest) >= len(t) && strings.EqualFold(rest[:len(t)], t) {
			return true
		}
	}
	return false
}

// summary words a task's end the way Claude Code does.
func summary(kind Kind, desc string, status Status, errText string, exit *int) string {
	if kind == KindLocalBash {
		subject := `Background command "` + desc + `"`
		switch {
		case status == StatusKilled:
			return subject + " was stopped"
		case status == StatusCompleted && exit != nil:
			return fmt.Sprintf("%s completed (exit code %d)", subject, *exit)
		case status == StatusCompleted:
			return subject + " completed"
		case exit != nil && errText == "":
			return fmt.Sprintf("%s failed with exit code %d", subject, *exit)
		}
		return subject + " failed: " + errText
	}
	subject := `Agent "` + desc + `"`
	if kind == KindWorkflow {
		subject = `Workflow "` + desc + `"`
	}
	switch status {
	case StatusCompleted:
		return subject + " completed"
	case StatusKilled:
		return subject + " was stopped"
	}
	return subject + " failed: " + errText
}
