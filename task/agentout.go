package task

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/transcript"
)

// What TaskOutput shows of a running agent. Its output file is its
// transcript (linked.go), one JSON entry a line: shown as it is, the
// model read a wall of JSON (ids, timestamps, the working directory) to
// learn the agent's state. So the entries are shown as the messages they
// hold, one item each, newest last:
//
//	[assistant] I will count them.
//	[tool call] Bash: find llm -name '*.go' | wc -l
//	[tool result] 42
//
// An assistant's text is kept to agentTextMax, a tool call is its name
// and its most telling input (the command, the path, the pattern...; else
// the input's JSON) on one line of at most agentInputMax, and a result is
// its first agentResultLines lines, at most agentResultMax bytes, each
// cut with a note of what was left; an item's later lines are indented
// under its first. The agent's prompt and what reached
// it meanwhile (messages, notifications) show as [prompt], [message from
// X] and [notification]; thinking and the transcript's other entries are
// left out. The newest items that fit maxOutputChars are shown, after a
// line that says how many earlier ones were left and where the whole
// transcript is, as a shell's long output is paged (tailText). A line
// that is not a transcript entry (a note the runtime wrote) shows as it
// is.

const (
	agentTextMax     = 2000
	agentInputMax    = 160
	agentResultMax   = 600
	agentResultLines = 8
)

// inputKeys are the input fields that say most about a tool call, in the
// order looked for.
var inputKeys = []string{"command", "file_path", "path", "pattern", "url", "query", "description", "subject", "prompt", "to", "task_id", "skill"}

// agentText renders transcript lines (see above); earlier is set when the
// transcript holds more before them.
func agentText(lines []string, earlier bool, path string) string {
	var items []string
	for _, l := range lines {
		for _, it := range entryItems(l) {
			items = append(items, strings.ReplaceAll(it, "\n", "\n  ")) // an item's later lines indented
		}
	}
	n, i := 0, len(items)
	for i > 0 && n+len(items[i-1])+1 <= maxOutputChars {
		i--
		n += len(items[i]) + 1
	}
	text := strings.Join(items[i:], "\n")
	switch {
	case i > 0 && earlier:
		text = fmt.Sprintf("[%d earlier messages omitted, and more before them; the whole transcript is in %s]\n%s", i, path, text)
	case i > 0:
		text = fmt.Sprintf("[%d earlier messages omitted; the whole transcript is in %s]\n%s", i, path, text)
	case earlier:
		text = fmt.Sprintf("[earlier messages omitted; the whole transcript is in %s]\n%s", path, text)
	}
	return text
}

// entryItems renders one transcript line.
func entryItems(line string) []string {
	var e transcript.Entry
	if !strings.HasPrefix(line, "{") || json.Unmarshal([]byte(line), &e) != nil || e.Type == "" {
		return []string{line}
	}
	if e.Message == nil || (e.Type != "user" && e.Type != "assistant") {
		return nil
	}
	var out []string
	for _, b := range e.Message.Content {
		switch {
		case b.Type == llm.BlockText && e.Type == "assistant":
			out = append(out, "[assistant] "+cutText(b.Text, agentTextMax))
		case b.Type == llm.BlockText:
			out = append(out, userLabel(e)+" "+cutText(b.Text, agentTextMax))
		case b.Type == llm.BlockToolUse:
			out = append(out, "[tool call] "+b.Name+shortInput(b.Input))
		case b.Type == llm.BlockToolResult:
			label := "[tool result]"
			if b.IsError {
				label = "[tool error]"
			}
			out = append(out, label+" "+resultText(b.Content))
		}
	}
	return out
}

// userLabel names what a user-role text of the agent's is.
func userLabel(e transcript.Entry) string {
	switch e.Origin {
	case "":
		return "[prompt]"
	case transcript.OriginTeammate:
		return "[message from " + e.From + "]"
	case transcript.OriginNotification:
		return "[notification]"
	}
	return "[" + strings.ReplaceAll(e.Origin, "_", " ") + "]"
}

// shortInput is ": " and a tool call's most telling input on one line, or
// "" for an empty input.
func shortInput(raw json.RawMessage) string {
	var in map[string]any
	if json.Unmarshal(raw, &in) != nil || len(in) == 0 {
		return ""
	}
	s := ""
	for _, k := range inputKeys {
		if v, ok := in[k].(string); ok && v != "" {
			s = v
			break
		}
	}
	if s == "" {
		s = string(raw)
	}
	return ": " + cutText(strings.Join(strings.Fields(s), " "), agentInputMax)
}

// resultText is a tool result's text, its first agentResultLines lines
// and at most agentResultMax bytes.
func resultText(content []llm.Block) string {
	var parts []string
	for _, c := range content {
		switch c.Type {
		case llm.BlockText:
			parts = append(parts, c.Text)
		case llm.BlockImage:
			parts = append(parts, "(an image)")
		default:
			if c.Name != "" {
				parts = append(parts, "("+string(c.Type)+" "+c.Name+")")
			}
		}
	}
	text := strings.TrimSpace(strings.Join(parts, "\n"))
	if lines := strings.Split(text, "\n"); len(lines) > agentResultLines {
		text = strings.Join(lines[:agentResultLines], "\n") + fmt.Sprintf("\n… (%d more lines)", len(lines)-agentResultLines)
	}
	return cutText(text, agentResultMax)
}

// cutText cuts s to at most max bytes, on a rune boundary, saying how much
// was left.
func cutText(s string, max int) string {
	s = strings.TrimSpace(s)
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d more bytes)", len(s)-cut)
}
