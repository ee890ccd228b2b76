package cost

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// PrintRequests writes one line per model request of recs: its order, who
// sent it (the start of its first user message), its turn, the bytes of
// its tools, system prompt and messages, the bytes and start of what its
// last message adds, and the usage billed — so a reader sees which
// requests a workload could do without and what each one carries.
func PrintRequests(w io.Writer, recs []fakeapi.Recorded) {
	seenTools := map[string]bool{}
	fmt.Fprintln(w, "#   who                            turn  tools  system  messages  new(bytes: start)                                   input  written  read")
	for _, r := range recs {
		if r.Path != "/v1/messages" || r.Status != 200 || r.Request == nil {
			continue
		}
		var body struct {
			Tools    json.RawMessage   `json:"tools"`
			System   json.RawMessage   `json:"system"`
			Messages []json.RawMessage `json:"messages"`
		}
		if json.Unmarshal(r.Body, &body) != nil {
			continue
		}
		msgs := 0
		for _, m := range body.Messages {
			msgs += len(m)
		}
		last := ""
		if n := len(body.Messages); n > 0 {
			last = fmt.Sprintf("%d: %s", len(body.Messages[n-1]), clip(r.Request.LastUserText(), 40))
		}
		if len(body.Tools) > 0 && !seenTools[string(body.Tools)] {
			seenTools[string(body.Tools)] = true
			toolSizes(w, body.Tools)
		}
		u := r.Usage
		fmt.Fprintf(w, "%-3d %-30s %4d %6d %7d %9d  %-50s %6d %8d %5d\n", r.Index, clip(r.Request.FirstUserText(), 30), r.Request.Turn(),
			len(body.Tools), len(body.System), msgs, last, u.InputTokens, u.CacheCreationInputTokens, u.CacheReadInputTokens)
	}
}

// toolSizes writes the bytes of each definition of a tool array, on one
// line, the first time a workload's requests carry that array.
func toolSizes(w io.Writer, raw json.RawMessage) {
	var tools []json.RawMessage
	if json.Unmarshal(raw, &tools) != nil {
		return
	}
	var b strings.Builder
	for _, t := range tools {
		var d struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(t, &d)
		fmt.Fprintf(&b, " %s %d", d.Name, len(t))
	}
	fmt.Fprintf(w, "    tools (bytes):%s\n", b.String())
}

// clip is s on one line, at most n runes.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
