// Command embed is Cohort used as a library: a lead on an in-process fake
// model fans out to three subagents, then answers a second prompt in the
// same session. It checks what it saw and exits 1 when something is
// missing, so CI runs it.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

func main() {
	srv := fakeapi.New(fakeapi.Config{Policy: model})
	defer srv.Close()
	dir, _ := os.MkdirTemp("", "embed-")
	defer os.RemoveAll(dir)
	s, err := cohort.New(context.Background(), cohort.Config{Dir: dir, Home: dir + "/.cohort", BaseURL: srv.URL, APIKey: "fake"})
	check(err == nil, "New: %v", err)
	defer s.Close()
	subagents, results := map[string]bool{}, []string{}
	for _, prompt := range []string{"Survey the three parts.", "Which was largest?"} {
		for ev, err := range s.Run(context.Background(), prompt) {
			check(err == nil && !ev.IsError, "the run failed: %v %s", err, ev.Result)
			if ev.ParentToolUseID != "" {
				subagents[ev.ParentToolUseID] = true // a subagent's event: the Agent call's id
			} else if ev.Type == cohort.EventResult {
				results = append(results, ev.Result)
			}
		}
	}
	check(len(subagents) == 3 && len(results) == 2, "saw %d subagents and %d results, want 3 and 2", len(subagents), len(results))
	fmt.Printf("3 subagents; results: %q\n", results)
}

// model plays the lead (three Agent calls, then a summary, then an answer)
// and the subagents (a line each).
func model(r *fakeapi.Request) fakeapi.Reply {
	if part, ok := strings.CutPrefix(r.FirstUserText(), "Measure "); ok {
		return fakeapi.TextReply(part + ": 120 lines")
	}
	switch r.Turn() {
	case 0:
		var calls []fakeapi.Block
		for _, part := range []string{"api", "cli", "docs"} {
			calls = append(calls, fakeapi.ToolUseBlock("", "Agent", map[string]any{
				"description": "measure " + part, "prompt": "Measure " + part, "subagent_type": "general-purpose"}))
		}
		return fakeapi.Reply{Content: calls}
	case 1:
		return fakeapi.TextReply("Each part has 120 lines.")
	}
	return fakeapi.TextReply("They are the same size.")
}

func check(ok bool, format string, args ...any) {
	if !ok {
		fmt.Fprintf(os.Stderr, "embed: "+format+"\n", args...)
		os.Exit(1)
	}
}
