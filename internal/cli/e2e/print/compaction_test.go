package print

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/transcript"
)

// TestCompactionOverTheCLI runs a scripted conversation that crosses a
// small context window: the history is compacted by a model-written
// summary, the run continues, and a resumed session starts from the
// compacted history.
func TestCompactionOverTheCLI(t *testing.T) {
	t.Parallel()
	summaries, steps := 0, 0
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		last := r.LastUserText()
		if strings.Contains(last, "about to be compacted") {
			summaries++
			return fakeapi.TextReply("SUMMARY: the user asked for twelve reads of notes.txt; all went fine.")
		}
		if strings.Contains(last, "and now?") {
			return fakeapi.TextReply("resumed fine")
		}
		// Count steps here: after compaction the history (and Turn) shrinks.
		n := steps
		steps++
		if n < 12 {
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Bash", map[string]any{"command": fmt.Sprintf("echo step %d; cat notes.txt", n)})}}
		}
		return fakeapi.TextReply("all twelve steps done")
	}
	h := clitest.New(t, policy)
	h.Write("notes.txt", strings.Repeat("a long line of notes to fill the context window quickly\n", 120))
	h.Write(".cohort/settings.json", `{"compaction": {"contextWindow": 20000, "threshold": 0.8, "keepRecent": 4}}`)
	out, errOut, code := h.Run("-p", "read the notes twelve times", "--output-format", "json", "--allowedTools", "Bash")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	r := h.Result(out)
	if r.Result != "all twelve steps done" {
		t.Fatalf("result = %+v", r)
	}
	if summaries == 0 {
		t.Fatal("the conversation never compacted")
	}
	// The requests after the first compaction start with the summary.
	compacted := 0
	for _, rec := range h.Srv.Requests() {
		if rec.Request != nil && strings.Contains(rec.Request.FirstUserText(), "SUMMARY: the user asked") {
			compacted++
		}
	}
	if compacted == 0 {
		t.Fatal("no request carried the summary")
	}
	tr, err := transcript.Load(transcript.Path(h.ProjectDir(), r.SessionID))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Compactions == 0 || !strings.Contains(tr.Messages[0].TextContent(), "SUMMARY") {
		t.Fatalf("the transcript should record the boundary and start after it: %d boundaries", tr.Compactions)
	}
	out, errOut, code = h.Run("-p", "and now?", "--output-format", "json", "--resume", r.SessionID)
	if code != 0 || h.Result(out).Result != "resumed fine" {
		t.Fatalf("resume across the boundary: exit %d\n%s\n%s", code, out, errOut)
	}
	all := h.Srv.Requests()
	resumed := all[len(all)-1].Request
	if !strings.Contains(resumed.FirstUserText(), "SUMMARY") {
		t.Fatal("the resumed session did not start from the compacted history")
	}
}
