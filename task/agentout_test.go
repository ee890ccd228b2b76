package task

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/transcript"
)

// agentTranscript starts a running agent task whose output is the
// transcript entries write, and returns it with a func that ends it.
func agentTranscript(t *testing.T, entries []transcript.Entry) (*Registry, *Task, func()) {
	t.Helper()
	r, _ := newReg(t, nil)
	path := filepath.Join(filepath.Dir(r.Dir()), "agent.jsonl")
	at := time.Date(2026, 12, 7, 11, 0, 0, 0, time.UTC)
	w, err := transcript.Create(transcript.WriterConfig{Path: path, SessionID: "s1", AgentID: "a1", Sidechain: true,
		Cwd: "/work/project", Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	for _, e := range entries {
		if err := w.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	release := make(chan struct{})
	tk, err := r.Start(context.Background(), Spec{Kind: KindLocalAgent, Description: "count the files", Background: true, Transcript: path},
		block(release, "done"))
	if err != nil {
		t.Fatal(err)
	}
	if !tk.Output().Linked() {
		t.Skip("the tasks directory cannot link to the transcript here")
	}
	return r, tk, func() { close(release); <-tk.Done() }
}

func message(role llm.Role, blocks ...llm.Block) transcript.Entry {
	return transcript.Entry{Type: string(role), Message: &llm.Message{Role: role, Content: blocks}}
}

func toolUse(name string, input any) llm.Block {
	raw, _ := json.Marshal(input)
	return llm.Block{Type: llm.BlockToolUse, ID: "tu-" + name, Name: name, Input: raw}
}

func toolResult(text string, isErr bool) llm.Block {
	return llm.Block{Type: llm.BlockToolResult, ToolUseID: "tu", Content: []llm.Block{llm.Text(text)}, IsError: isErr}
}

// TestTaskOutputShowsARunningAgentsMessages: TaskOutput on a running
// agent shows its messages as text, not its transcript's JSON lines: the
// prompt, what it said, each tool call by name with its most telling
// input, each result cut, a message it got, a note the runtime wrote;
// thinking and the transcript's other entries left out (golden).
func TestTaskOutputShowsARunningAgentsMessages(t *testing.T) {
	var listing []string
	for i := range 14 {
		listing = append(listing, fmt.Sprintf("llm/file%02d.go", i))
	}
	entries := []transcript.Entry{
		{Type: "system", Subtype: "init", Content: "started"},
		message(llm.RoleUser, llm.Text("Count the Go files under llm/ and say how many there are.")),
		message(llm.RoleAssistant, llm.Block{Type: llm.BlockThinking, Thinking: "find is quickest"},
			llm.Text("I will list them first."),
			toolUse("Bash", map[string]any{"command": "find llm -name '*.go'\n  | sort", "description": "List the Go files"})),
		message(llm.RoleUser, toolResult(strings.Join(listing, "\n"), false)),
		message(llm.RoleAssistant, toolUse("Read", map[string]any{"file_path": "llm/missing.go"}),
			toolUse("TodoWrite", map[string]any{"todos": []any{map[string]any{"content": "count", "status": "in_progress"}}})),
		message(llm.RoleUser, toolResult("File does not exist: llm/missing.go", true), toolResult("Todos updated", false)),
		{Type: "user", Origin: transcript.OriginTeammate, From: "team-lead", Message: &llm.Message{Role: llm.RoleUser,
			Content: []llm.Block{llm.Text("Count the test files apart.")}}},
		message(llm.RoleAssistant, llm.Text(strings.Repeat("There are 14 files. ", 110))),
	}
	r, tk, end := agentTranscript(t, entries)
	defer end()
	if err := tk.Output().WriteLine("a note from the runtime"); err != nil {
		t.Fatal(err)
	}
	got := run(t, NewOutputTool(r, nil), lead, fmt.Sprintf(`{"task_id":%q,"block":false}`, tk.ID())).TextOf()
	if strings.Contains(got, `"uuid"`) || strings.Contains(got, "find is quickest") {
		t.Errorf("the model was shown transcript JSON or thinking:\n%s", got)
	}
	golden(t, "taskoutput_running_agent", strings.ReplaceAll(got, tk.ID(), "TASK_ID"))
}

// TestTaskOutputPagesALongAgentTranscript: an agent whose messages do
// not fit shows its newest ones, after a line that says how many earlier
// ones were left out and where the whole transcript is.
func TestTaskOutputPagesALongAgentTranscript(t *testing.T) {
	var entries []transcript.Entry
	for i := range 300 {
		entries = append(entries, message(llm.RoleAssistant, llm.Text(fmt.Sprintf("step %03d %s", i, strings.Repeat("x", 150)))))
	}
	r, tk, end := agentTranscript(t, entries)
	defer end()
	got := run(t, NewOutputTool(r, nil), lead, fmt.Sprintf(`{"task_id":%q,"block":false}`, tk.ID())).TextOf()
	body := got[strings.Index(got, "<output>\n")+len("<output>\n") : strings.Index(got, "\n</output>")]
	lines := strings.Split(body, "\n")
	wantHead := fmt.Sprintf("[%d earlier messages omitted; the whole transcript is in %s]", 300-(len(lines)-1), tk.State().OutputFile)
	if lines[0] != wantHead || !strings.HasPrefix(lines[len(lines)-1], "[assistant] step 299 ") || len(body) > maxOutputChars+200 {
		t.Errorf("a long transcript shown as %d lines, %d bytes; head %q (want %q), last %.40q", len(lines), len(body), lines[0], wantHead, lines[len(lines)-1])
	}
}
