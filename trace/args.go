package trace

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// Caps on what goes into a trace, so the file holds a timeline and not the
// conversation.
const (
	argCap  = 200 // summaries in args
	nameCap = 80  // track and span names
	// rawCap bounds how much of a tool input is looked at to summarize it.
	rawCap = 4 << 10
)

// clip shortens s to at most n runes, marking the cut with "…", and makes
// it valid UTF-8.
func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, k := 0, 0
	for i = range s {
		if k == n-1 {
			break
		}
		k++
	}
	return s[:i] + "…"
}

// summarizeJSON renders a tool input compactly (no insignificant white
// space) and clips it.
func summarizeJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var b bytes.Buffer
	if len(raw) <= rawCap && json.Compact(&b, raw) == nil {
		return clip(b.String(), argCap)
	}
	// Too long to compact whole, or not JSON: squeeze the white space of
	// its beginning.
	head := raw[:min(len(raw), rawCap)]
	return clip(strings.Join(strings.Fields(string(head)), " "), argCap)
}
