package scenario

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// leadReply answers the lead. The next agent to start is worked out from the
// conversation itself — one past the highest bench-sub id among its Agent
// calls, or the next= of a compaction summary — so retries get the same
// answer and a compacted history does not start agents twice.
func (p *Policy) leadReply(r *fakeapi.Request, s Spec, base int) fakeapi.Reply {
	f := analyseLead(r)
	next := max(base, f.maxID+1)
	p.mu.Lock()
	p.sum.Requests++
	p.sum.LeadRequests++
	if f.summary {
		p.sum.Compactions++
	}
	p.seen.merge(f)
	p.mu.Unlock()

	if f.summary {
		return fakeapi.TextReply(s.progressLine(next) + "\nThe benchmark agents up to that id were started; the rest of the history is their results.")
	}
	if next >= s.Agents {
		return fakeapi.TextReply(s.progressLine(next) + "\nAll agents were started; waiting for any that are still running.")
	}
	if s.PerPrompt && !strings.Contains(r.LastUserText(), NextPrompt) {
		return fakeapi.TextReply(s.progressLine(next) + "\nWaiting for the agents of this batch.")
	}
	var calls []fakeapi.Block
	for id := next; id < min(s.Agents, next+s.perMessage()); id++ {
		in := map[string]any{"description": fmt.Sprintf("bench worker %d", id),
			"prompt": s.subPrompt(id), "subagent_type": "general-purpose"}
		if s.Background {
			in["run_in_background"] = true
		}
		calls = append(calls, fakeapi.ToolUseBlock("", "Agent", in))
	}
	return fakeapi.Reply{Content: calls}
}

// leadFacts is what one lead request shows.
type leadFacts struct {
	messages, bytes int
	// maxID is the highest bench-sub id among the Agent calls (-1: none).
	maxID int
	// summary: the request asks for a compaction summary.
	summary   bool
	answered  []string // Agent call ids with a result
	failed    []string // of them, is_error
	notified  []string // task ids, once per notification
	completed []string // task ids of completed notifications
	reports   []int
}

const (
	notifyOpen  = "<task-notification>"
	notifyClose = "</task-notification>"
	reportTag   = "bench-report id="
	subIDTag    = subTag + " id="
)

// analyseLead scans the whole request. It is linear in the request's size
// and uses no regular expressions: lead histories reach megabytes.
func analyseLead(r *fakeapi.Request) leadFacts {
	f := leadFacts{messages: len(r.Messages), bytes: len(r.Raw), maxID: -1, summary: isSummaryRequest(r)}
	agentCalls := map[string]bool{}
	for _, m := range r.Messages {
		for _, b := range m.Content {
			switch {
			case b.Type == "tool_use" && b.Name == "Agent":
				agentCalls[b.ID] = true
				if id, ok := numberAfter(string(b.Input), subIDTag); ok {
					f.maxID = max(f.maxID, id)
				}
			case b.Type == "tool_result" && agentCalls[b.ToolUseID]:
				f.answered = append(f.answered, b.ToolUseID)
				if b.IsError {
					f.failed = append(f.failed, b.ToolUseID)
				}
				for _, c := range b.Content {
					f.reports = appendReports(f.reports, c.Text)
				}
			case b.Type == "text" && m.Role == "user":
				f.scanNotifications(b.Text)
			}
		}
	}
	return f
}

func (f *leadFacts) scanNotifications(text string) {
	for {
		i := strings.Index(text, notifyOpen)
		if i < 0 {
			return
		}
		text = text[i+len(notifyOpen):]
		n := text
		if j := strings.Index(text, notifyClose); j >= 0 {
			n, text = text[:j], text[j+len(notifyClose):]
		}
		id := element(n, "task-id")
		f.notified = append(f.notified, id)
		if element(n, "status") == "completed" {
			f.completed = append(f.completed, id)
		}
		f.reports = appendReports(f.reports, n)
	}
}

// element returns the text of the first <tag>…</tag> in s.
func element(s, tag string) string {
	_, rest, ok := strings.Cut(s, "<"+tag+">")
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, "</"+tag+">")
	return v
}

func appendReports(ids []int, text string) []int {
	for {
		i := strings.Index(text, reportTag)
		if i < 0 {
			return ids
		}
		text = text[i:]
		if id, ok := numberAfter(text, reportTag); ok {
			ids = append(ids, id)
		}
		text = text[len(reportTag):]
	}
}

// numberAfter parses the decimal number that follows the first tag in s.
func numberAfter(s, tag string) (int, bool) {
	_, rest, ok := strings.Cut(s, tag)
	if !ok {
		return 0, false
	}
	end := 0
	for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
		end++
	}
	n, err := strconv.Atoi(rest[:end])
	return n, err == nil
}

// isSummaryRequest tells a compaction request from an ordinary lead turn by
// its shape, not its wording: after the first turn the lead's user messages
// hold only tool results and task notifications, so a last block of other
// plain text is the engine's instruction to summarise.
func isSummaryRequest(r *fakeapi.Request) bool {
	n := len(r.Messages)
	if n == 0 || r.Turn() == 0 || r.Messages[n-1].Role != "user" {
		return false
	}
	c := r.Messages[n-1].Content
	if len(c) == 0 {
		return false
	}
	last := c[len(c)-1]
	return last.Type == "text" && !strings.Contains(last.Text, notifyOpen) && !strings.Contains(last.Text, NextPrompt)
}

// leadSeen accumulates leadFacts over a run. Not safe for concurrent use:
// the Policy's mutex guards it.
type leadSeen struct {
	messages, bytes int
	answered        map[string]bool
	failed          map[string]bool
	notified        map[string]bool
	completed       map[string]bool
	reports         map[int]bool
	duplicates      int
}

func (s *leadSeen) merge(f leadFacts) {
	if s.answered == nil {
		s.answered, s.failed, s.notified = map[string]bool{}, map[string]bool{}, map[string]bool{}
		s.completed, s.reports = map[string]bool{}, map[int]bool{}
	}
	s.messages, s.bytes = max(s.messages, f.messages), max(s.bytes, f.bytes)
	add(s.answered, f.answered)
	add(s.failed, f.failed)
	add(s.completed, f.completed)
	distinct := map[string]bool{}
	add(distinct, f.notified)
	s.duplicates = max(s.duplicates, len(f.notified)-len(distinct))
	add(s.notified, f.notified)
	for _, id := range f.reports {
		s.reports[id] = true
	}
}

func add(set map[string]bool, keys []string) {
	for _, k := range keys {
		set[k] = true
	}
}

func (s *leadSeen) fill(sum *Summary) {
	sum.LeadMessages, sum.LeadBytes = s.messages, s.bytes
	sum.AgentResults, sum.AgentErrors = len(s.answered), len(s.failed)
	sum.Notified, sum.Completed, sum.Duplicates = len(s.notified), len(s.completed), s.duplicates
	sum.Reports = len(s.reports)
}
