package engine

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/transcript"
)

// TestCompactionContinuesAndResumes runs a conversation that crosses the
// compaction threshold, checks that the next request carries the summary
// and the recent turns only, and that a transcript loaded from disk resumes
// from the compacted history.
func TestCompactionContinuesAndResumes(t *testing.T) {
	w := &probe{name: "W"}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	rec, err := transcript.Create(transcript.WriterConfig{Path: path, SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()

	var reqs []*llm.Request
	summaries := 0
	model := replyFunc(func(req *llm.Request) *llm.Response {
		last := req.Messages[len(req.Messages)-1]
		if strings.Contains(llm.JoinText(last.Content), "about to be compacted") {
			summaries++
			return &llm.Response{Content: []llm.Block{llm.Text("SUMMARY: the user asked for eight steps")},
				StopReason: llm.StopEndTurn}
		}
		reqs = append(reqs, req)
		n := len(reqs)
		// Usage grows by 100 tokens a turn; the window is 1000 at 80 %.
		u := llm.Usage{InputTokens: int64(100 * n), OutputTokens: 10}
		if n <= 10 {
			return &llm.Response{Content: []llm.Block{use("t"+string(rune('a'+n)), "W", `{"v":"s"}`)},
				StopReason: llm.StopToolUse, Usage: u}
		}
		return &llm.Response{Content: []llm.Block{llm.Text("finished")}, StopReason: llm.StopEndTurn, Usage: u}
	})
	a := New(Config{Model: model, Tools: []tool.Tool{w}, Recorder: rec,
		Compaction: Compaction{ContextWindow: 1000, Threshold: 0.8, KeepRecent: 4}})
	res, err := a.Send(t.Context(), []llm.Block{llm.Text("do eight steps")}, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "finished" {
		t.Fatalf("result = %+v", res)
	}
	if summaries == 0 {
		t.Fatal("the conversation never compacted")
	}
	// The request right after the first compaction starts with the summary.
	var after *llm.Request
	for _, r := range reqs {
		if strings.Contains(r.Messages[0].TextContent(), "SUMMARY:") {
			after = r
			break
		}
	}
	if after == nil {
		t.Fatal("no request carried the summary")
	}
	if got := len(after.Messages); got > 6 {
		t.Fatalf("compacted request still has %d messages", got)
	}
	if after.Messages[1].Role != llm.RoleAssistant {
		t.Fatalf("summary must be followed by a kept assistant message, got %s", after.Messages[1].Role)
	}

	tr, err := transcript.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Compactions != summaries {
		t.Fatalf("transcript has %d boundaries, want %d", tr.Compactions, summaries)
	}
	if len(tr.Problems) != 0 {
		t.Fatalf("problems: %v", tr.Problems)
	}
	hist := a.History()
	if len(tr.Messages) != len(hist) {
		t.Fatalf("resumed history has %d messages, in memory %d", len(tr.Messages), len(hist))
	}
	for i := range hist {
		if hist[i].TextContent() != tr.Messages[i].TextContent() || hist[i].Role != tr.Messages[i].Role {
			t.Fatalf("message %d differs after resume", i)
		}
	}
}
