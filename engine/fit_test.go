package engine

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/transcript"
)

// fanOut is a history like a lead's after launching n agents in one
// message: the task, n tool calls, n results of size bytes each, plus one
// short result that must stay whole.
func fanOut(n, size int) []llm.Message {
	calls := []llm.Block{llm.Text("launching")}
	results := []llm.Block{}
	for i := range n {
		id := fmt.Sprintf("toolu_%04d", i)
		calls = append(calls, use(id, "Agent", `{"prompt":"work"}`))
		results = append(results, llm.ToolResult(id, strings.Repeat(string(rune('a'+i%26)), size), false))
	}
	calls = append(calls, use("short", "Agent", `{}`))
	results = append(results, llm.ToolResult("short", "tiny", false))
	return []llm.Message{
		{Role: llm.RoleUser, Content: []llm.Block{llm.Text(strings.Repeat("the task ", 500))}},
		{Role: llm.RoleAssistant, Content: calls},
		{Role: llm.RoleUser, Content: results},
	}
}

func TestFitMessagesCutsTheLongestTextsToFit(t *testing.T) {
	msgs := fanOut(1000, 1500) // ≈ 1.5 MB of results
	orig := fmt.Sprint(msgs)
	const budget = 150_000
	fitted, cut := fitMessages(msgs, budget)
	if got := messagesTokens(fitted); got > budget {
		t.Fatalf("fitted messages estimate %d tokens, budget %d", got, budget)
	}
	if got := messagesTokens(fitted); got < budget*9/10 {
		t.Errorf("fitted messages estimate %d tokens; cut far more than needed for %d", got, budget)
	}
	if cut != 1000 {
		t.Errorf("cut %d texts, want the 1,000 long results", cut)
	}
	if fmt.Sprint(msgs) != orig {
		t.Fatal("fitMessages modified its input")
	}
	if diff := cmp.Diff(msgs[:2], fitted[:2]); diff != "" {
		t.Fatalf("the task and the tool calls changed (-before +after):\n%s", diff)
	}
	res := fitted[2].Content
	if len(res) != 1001 || res[1000].ToolUseID != "short" || res[1000].Content[0].Text != "tiny" {
		t.Fatalf("the short result was not kept whole: %+v", res[len(res)-1])
	}
	for i, b := range res[:1000] {
		text := b.Content[0].Text
		if b.ToolUseID != fmt.Sprintf("toolu_%04d", i) || !strings.HasSuffix(text, "bytes cut here so that the conversation fits the context window …]") {
			t.Fatalf("result %d: id %s, text %q", i, b.ToolUseID, text)
		}
		if !strings.HasPrefix(text, strings.Repeat(string(rune('a'+i%26)), 10)) {
			t.Fatalf("result %d lost its beginning: %q", i, text[:20])
		}
	}
}

func TestFitMessagesLeavesWhatFits(t *testing.T) {
	msgs := fanOut(10, 100)
	fitted, cut := fitMessages(msgs, messagesTokens(msgs))
	if cut != 0 || &fitted[0] != &msgs[0] {
		t.Fatalf("cut %d texts of messages that fit", cut)
	}
	// Nothing can be cut below minCutBytes: the result is as close as that.
	fitted, cut = fitMessages(fanOut(100, 1000), 1)
	if cut != 100 {
		t.Fatalf("cut %d texts, want 100", cut)
	}
	for _, b := range fitted[2].Content[:100] {
		if n := len(b.Content[0].Text); n > minCutBytes || n < minCutBytes-8 {
			t.Fatalf("a text was cut to %d bytes, want about %d", n, minCutBytes)
		}
	}
}

func TestCutTextKeepsCharactersWhole(t *testing.T) {
	s := strings.Repeat("é", 400) // two bytes each
	got := cutText(s, 300)
	if len(got) > 300 || !strings.HasPrefix(got, "éé") {
		t.Fatalf("cutText gave %d bytes: %q", len(got), got)
	}
	kept := got[:strings.Index(got, "\n[…")]
	if strings.Trim(kept, "é") != "" {
		t.Fatalf("a character was split: %q", kept)
	}
	// Quotes take two bytes each once escaped, and the limit is on those.
	quoted := cutText(strings.Repeat(`"`, 1000), 300)
	if n := jsonLen(quoted); n > 300 || n < 250 {
		t.Fatalf("cutText of quotes is %d bytes escaped, want at most 300 (and not far below)", n)
	}
}

// TestEngineFitsAnOversizedTurn: one turn's results are far over the window
// and compaction has nothing older to summarise; the next request is cut
// to fit, the transcript holds the cut history after a boundary, and a
// resume from it sends the same bytes.
func TestEngineFitsAnOversizedTurn(t *testing.T) {
	const window = 20_000
	var sizes []int64
	turn := 0
	model := replyFunc(func(req *llm.Request) *llm.Response {
		sizes = append(sizes, messagesTokens(req.Messages))
		turn++
		if turn == 1 {
			return &llm.Response{Content: []llm.Block{use("big", "Big", `{}`)}, StopReason: llm.StopToolUse, Usage: llm.Usage{InputTokens: 100}}
		}
		return &llm.Response{Content: []llm.Block{llm.Text("done")}, StopReason: llm.StopEndTurn, Usage: llm.Usage{InputTokens: 100}}
	})
	rec := &memRecorder{}
	a := New(Config{Model: model, Tools: []tool.Tool{bigTool{size: 200_000}}, Recorder: rec,
		Compaction: Compaction{ContextWindow: window, Threshold: 0.8, KeepRecent: 6, MaxSummaryTokens: 1000}})
	if _, err := a.Send(t.Context(), []llm.Block{llm.Text("go")}, ""); err != nil {
		t.Fatal(err)
	}
	if len(sizes) != 2 || sizes[1] > window*8/10 {
		t.Fatalf("request sizes %v; the second should fit under %d tokens", sizes, window*8/10)
	}
	tr := rec.transcript(t)
	if tr.Compactions != 1 {
		t.Fatalf("transcript has %d compaction boundaries, want 1", tr.Compactions)
	}
	last := tr.Messages[2].Content[0].Content[0].Text
	if !strings.Contains(last, "bytes cut here") {
		t.Fatalf("the transcript does not hold the cut result: %.80q", last)
	}
	if diff := cmp.Diff(a.History()[:3], tr.Messages[:3]); diff != "" {
		t.Fatalf("transcript after the boundary differs from the history (-engine +transcript):\n%s", diff)
	}
}

// memRecorder keeps transcript entries in memory.
type memRecorder struct{ lines []string }

func (m *memRecorder) Append(e transcript.Entry) error {
	data, err := json.Marshal(e)
	m.lines = append(m.lines, string(data))
	return err
}

// transcript writes the entries to a file and loads it as a resume would.
func (m *memRecorder) transcript(t *testing.T) *transcript.Transcript {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(m.lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tr, err := transcript.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}
