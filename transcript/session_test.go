package transcript

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/llm"
)

func write(t *testing.T, path string, entries ...Entry) {
	t.Helper()
	w, err := Create(WriterConfig{Path: path, SessionID: "s1", AgentID: "lead", Now: func() time.Time { return time.Unix(1700000000, 0) }})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, e := range entries {
		if err := w.Append(e); err != nil {
			t.Fatal(err)
		}
	}
}

func msg(role llm.Role, blocks ...llm.Block) *llm.Message {
	return &llm.Message{Role: role, Content: blocks}
}

func TestRoundTripKeepsMessagesAndChainsEntries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p", "s1.jsonl")
	system := []llm.Block{llm.Text("you are a test")}
	write(t, path,
		Entry{Type: TypeSystem, Subtype: SubtypeInit, System: system, Model: "m"},
		Entry{Type: TypeUser, Message: msg(llm.RoleUser, llm.Text("hi"))},
		Entry{Type: TypeAssistant, Message: msg(llm.RoleAssistant, llm.Text("hello"))},
	)
	tr, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Init == nil || tr.Init.Model != "m" || tr.SessionID != "s1" {
		t.Fatalf("init = %+v", tr.Init)
	}
	if diff := cmp.Diff(system, tr.Init.System); diff != "" {
		t.Fatalf("system (-want +got):\n%s", diff)
	}
	if len(tr.Messages) != 2 || tr.Messages[1].TextContent() != "hello" || len(tr.Problems) != 0 {
		t.Fatalf("messages = %+v problems = %v", tr.Messages, tr.Problems)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("transcript mode = %v (%v), want 0600", info.Mode().Perm(), err)
	}
	// A reopened writer continues the parent chain.
	write(t, path, Entry{Type: TypeUser, Message: msg(llm.RoleUser, llm.Text("again"))})
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 4 || !strings.Contains(lines[3], `"parentUuid"`) {
		t.Fatalf("appended entry should name its parent:\n%s", lines[len(lines)-1])
	}
}

func TestCorruptAndTornLinesAreSkippedAndReported(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s1.jsonl")
	write(t, path,
		Entry{Type: TypeUser, Message: msg(llm.RoleUser, llm.Text("first"))},
		Entry{Type: TypeAssistant, Message: msg(llm.RoleAssistant, llm.Text("answer"))},
	)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("this is not json\n")
	f.WriteString(`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"later"}]}}` + "\n")
	f.WriteString(`{"type":"assistant","mess`) // torn: the writer died
	f.Close()
	tr, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Problems) != 2 || !strings.Contains(tr.Problems[0], ":3: corrupt line") || !strings.Contains(tr.Problems[1], ":5: torn last line") {
		t.Fatalf("problems = %q", tr.Problems)
	}
	if got := len(tr.Messages); got != 3 || tr.Messages[2].TextContent() != "later" {
		t.Fatalf("valid messages should survive: %d", got)
	}
}

func TestUnansweredToolCallsAreMarkedInterrupted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s1.jsonl")
	write(t, path,
		Entry{Type: TypeUser, Message: msg(llm.RoleUser, llm.Text("go"))},
		Entry{Type: TypeAssistant, Message: msg(llm.RoleAssistant, llm.ToolUse("t1", "Bash", []byte(`{"command":"sleep 9"}`)))},
	)
	tr, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	last := tr.Messages[len(tr.Messages)-1]
	if last.Role != llm.RoleUser || len(last.Content) != 1 || last.Content[0].ToolUseID != "t1" || !last.Content[0].IsError {
		t.Fatalf("last message = %+v", last)
	}
}

func TestCompactionBoundaryStartsTheHistory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s1.jsonl")
	write(t, path,
		Entry{Type: TypeUser, Message: msg(llm.RoleUser, llm.Text("old"))},
		Entry{Type: TypeAssistant, Message: msg(llm.RoleAssistant, llm.Text("old answer"))},
		Entry{Type: TypeSystem, Subtype: SubtypeCompactBoundary},
		Entry{Type: TypeUser, Message: msg(llm.RoleUser, llm.Text("SUMMARY")), Origin: OriginCompactSummary},
		Entry{Type: TypeAssistant, Message: msg(llm.RoleAssistant, llm.Text("kept"))},
	)
	tr, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Compactions != 1 || len(tr.Messages) != 2 || tr.Messages[0].TextContent() != "SUMMARY" {
		t.Fatalf("history after the boundary = %+v", tr.Messages)
	}
}

func TestLatestPicksTheNewestTranscript(t *testing.T) {
	dir := t.TempDir()
	for i, id := range []string{"old", "new"} {
		p := Path(dir, id)
		write(t, p, Entry{Type: TypeUser, Message: msg(llm.RoleUser, llm.Text(id))})
		ts := time.Now().Add(time.Duration(i-2) * time.Hour)
		os.Chtimes(p, ts, ts)
	}
	got, err := Latest(dir)
	if err != nil || got != "new" {
		t.Fatalf("Latest = %q, %v", got, err)
	}
	if _, err := Latest(filepath.Join(dir, "missing")); err == nil {
		t.Fatal("an empty project has no latest session")
	}
}

func FuzzLoad(f *testing.F) {
	f.Add([]byte(`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"x"}]}}` + "\n"))
	f.Add([]byte("garbage\n{\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "f.jsonl")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		tr, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(tr.Messages); n > 0 && tr.Messages[0].Role != llm.RoleUser {
			t.Fatalf("history must start with a user message: %+v", tr.Messages[0])
		}
	})
}

// TestARecordedRepairLeavesNothingToRepair: the tail repair is handed out
// as Unrecorded; once a resumed session has written it, the next load
// needs no repair, and any number of resumes work (issue 17 item 7).
func TestARecordedRepairLeavesNothingToRepair(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s1.jsonl")
	write(t, path,
		Entry{Type: TypeUser, Message: msg(llm.RoleUser, llm.Text("go"))},
		Entry{Type: TypeAssistant, Message: msg(llm.RoleAssistant, llm.ToolUse("t1", "Bash", []byte(`{"command":"sleep 9"}`)))},
	)
	tr, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Unrecorded == nil || len(tr.Problems) != 1 {
		t.Fatalf("first load: unrecorded %v, problems %q", tr.Unrecorded, tr.Problems)
	}
	write(t, path, Entry{Type: TypeUser, Message: tr.Unrecorded, Origin: OriginToolResult},
		Entry{Type: TypeUser, Message: msg(llm.RoleUser, llm.Text("again"))})
	again, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if again.Unrecorded != nil || len(again.Problems) != 0 {
		t.Fatalf("second load: unrecorded %v, problems %q", again.Unrecorded, again.Problems)
	}
	if n := len(again.Messages); n != 3 || again.Messages[2].Content[0].ToolUseID != "t1" {
		t.Fatalf("second load: %d messages: %+v", n, again.Messages)
	}
}

// TestAToolCallWithoutResultInsideTheHistoryIsAnswered: of two parallel
// calls only one result was written before the session went on; the other
// gets an interrupted result at the head of the next user message, so the
// history is sendable.
func TestAToolCallWithoutResultInsideTheHistoryIsAnswered(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s1.jsonl")
	write(t, path,
		Entry{Type: TypeUser, Message: msg(llm.RoleUser, llm.Text("go"))},
		Entry{Type: TypeAssistant, Message: msg(llm.RoleAssistant,
			llm.ToolUse("t1", "Bash", []byte(`{"command":"true"}`)), llm.ToolUse("t2", "Bash", []byte(`{"command":"true"}`)))},
		Entry{Type: TypeUser, Message: msg(llm.RoleUser, llm.ToolResult("t1", "ok", false))},
		Entry{Type: TypeAssistant, Message: msg(llm.RoleAssistant, llm.Text("done"))},
	)
	tr, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Unrecorded != nil || len(tr.Problems) != 1 {
		t.Fatalf("unrecorded %v, problems %q", tr.Unrecorded, tr.Problems)
	}
	got := map[string]bool{}
	for _, b := range tr.Messages[2].Content {
		got[b.ToolUseID] = b.IsError
	}
	if len(got) != 2 || got["t1"] || !got["t2"] {
		t.Fatalf("results after the calls: %+v", tr.Messages[2].Content)
	}
}

// TestFirstPromptSkipsReminders: a session's first prompt is the user's
// text, not the reminders (memory files, project memory) before it.
func TestFirstPromptSkipsReminders(t *testing.T) {
	dir := t.TempDir()
	write(t, Path(dir, "s1"), Entry{Type: TypeUser, Message: msg(llm.RoleUser,
		llm.Text("<system-reminder>\n# Memory\n</system-reminder>"), llm.Text("fix the build"))})
	list, err := List(dir, nil)
	if err != nil || len(list) != 1 || list[0].FirstPrompt != "fix the build" {
		t.Fatalf("List: %+v %v", list, err)
	}
}
