package tui

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestTypedAheadWhileASubagentWorks (issue 43 item 11): text typed while
// the lead waits for a subagent shows as queued; once the lead has read it
// (its next request is still held), the queued line is gone and the text
// is in the conversation as the user's; the model receives it marked as
// the user's message sent during the turn (testdata/typeahead-request.golden
// is the block it reads).
func TestTypedAheadWhileASubagentWorks(t *testing.T) {
	sub, next := newGate(1), newGate(1)
	var seen rawRequests
	w := newWorld(t, worldConfig{}, func(r *fakeapi.Request) fakeapi.Reply {
		switch {
		case strings.Contains(r.FirstUserText(), "SUB-MATCH"):
			if !sub.wait(r) {
				return fakeapi.FaultReply(fakeapi.ServerError)
			}
			return fakeapi.TextReply("Match is covered.")
		case r.Turn() == 0:
			return fakeapi.Reply{Content: []fakeapi.Block{fakeapi.ToolUseBlock("toolu_sub1", "Agent", map[string]any{
				"description": "check match", "prompt": "SUB-MATCH check Match", "subagent_type": "general-purpose"})}}
		case r.Turn() == 1:
			seen.add(r)
			if !next.wait(r) {
				return fakeapi.FaultReply(fakeapi.ServerError)
			}
		}
		return fakeapi.TextReply("Checked IsPattern as well.")
	})
	defer close(next.open)
	w.waitFor("default mode")
	w.typeText("review match")
	w.key("enter")
	sub.await(t)
	w.waitFor("◆ Agent(check match)")
	w.typeText("also check IsPattern")
	w.key("enter")
	w.golden("typeahead-subagent-queued", hideIDs(w.waitFor("queued: also check IsPattern")))
	close(sub.open)
	next.await(t)
	read := w.waitUntil("the typed text read", func(s string) bool {
		return strings.Contains(s, "> also check IsPattern") && !strings.Contains(s, "queued:") &&
			strings.Contains(s, "Match is covered.") // the Agent call's result may be drawn a frame later
	})
	w.golden("typeahead-subagent-read", hideIDs(read))
	if strings.Contains(read, "user-message") || strings.Contains(read, "during your turn") {
		t.Errorf("the frame shows the model's framing of the typed text:\n%s", read)
	}
	// The block the model reads.
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal([]byte(seen.find("IsPattern")), &req); err != nil || len(req.Messages) == 0 {
		t.Fatalf("the lead's request after the subagent: %v", err)
	}
	last := req.Messages[len(req.Messages)-1]
	var got []string
	for _, b := range last.Content {
		if b.Type == "text" {
			got = append(got, b.Text)
		}
	}
	requestGolden(t, "typeahead-request", last.Role+"\n"+strings.Join(got, "\n---\n")+"\n")
}

// requestGolden compares what the model was sent with testdata/NAME.golden
// (-update writes it).
func requestGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if string(want) != got {
		t.Errorf("the request differs from %s:\nwant:\n%s\ngot:\n%s", path, want, got)
	}
}
