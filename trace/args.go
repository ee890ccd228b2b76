package trace

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/cohort-dev/cohort/internal/clip"
)

// Caps on what goes into a trace, so the file holds a timeline and not the
// conversation.
const (
	argCap  = 200 // summaries in args
	nameCap = 80  // track and span names
	// rawCap bounds how much of a tool input is looked at to summarize it.
	rawCap = 4 << 10
)

// fit shortens s to at most n runes, marking the cut with "…", and makes
// it valid UTF-8.
func fit(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return clip.Runes(s, n-1) // n characters with the ellipsis
}

// summarizeJSON renders a tool input compactly (no insignificant white
// space) and clips it.
func summarizeJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var b bytes.Buffer
	if len(raw) <= rawCap && json.Compact(&b, raw) == nil {
		return fit(b.String(), argCap)
	}
	// Too long to compact whole, or not JSON: squeeze the white space of
	// its beginning.
	head := raw[:min(len(raw), rawCap)]
	return fit(strings.Join(strings.Fields(string(head)), " "), argCap)
}
