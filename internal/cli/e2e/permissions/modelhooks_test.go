package permissions

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// hookQuestion marks the requests of prompt and agent hooks: their system
// prompt.
const hookQuestion = "You check one event of a coding agent's work"

// TestPromptHookGuardsBash configures a PreToolUse prompt hook on Bash
// whose model (the fake, answering the hook's own request) refuses rm -rf:
// the rm call is denied with the model's reason and never runs, ls runs,
// and each hook request names the hook's model, offers no tools and
// carries the event's input where $ARGUMENTS stood.
func TestPromptHookGuardsBash(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var asked []*fakeapi.Request
	var results []string
	lead := clitest.NewConv()
	h := clitest.New(t, func(r *fakeapi.Request) fakeapi.Reply {
		if strings.Contains(r.SystemText(), hookQuestion) {
			mu.Lock()
			asked = append(asked, r)
			mu.Unlock()
			if strings.Contains(r.FirstUserText(), "rm -rf") {
				return fakeapi.TextReply(`{"ok": false, "reason": "rm -rf would delete the build output"}`)
			}
			return fakeapi.TextReply("```json\n{\"ok\": true}\n```")
		}
		return lead.Policy(r)
	})
	build := h.Write("build/out.txt", "keep me\n")
	note := func(r *fakeapi.Request) {
		mu.Lock()
		results = append(results, clitest.ToolResults(r)...)
		mu.Unlock()
	}
	lead.On("clean up",
		clitest.Calls(clitest.Use("Bash", map[string]any{"command": "rm -rf build"})),
		func(r *fakeapi.Request) fakeapi.Reply {
			note(r)
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Bash", map[string]any{"command": "ls"})}}
		},
		func(r *fakeapi.Request) fakeapi.Reply { note(r); return fakeapi.TextReply("cleaned") })
	h.Write(".cohort/settings.json", `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "prompt", "model": "haiku",
  "prompt": "Refuse commands that delete files. The call: $ARGUMENTS"}]}]}}`)
	out, errOut, code := h.Run("-p", "clean up", "--output-format", "json", "--allowedTools", "Bash")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(results) != 2 || !strings.Contains(results[0], "rm -rf would delete the build output") || !strings.Contains(results[1], "build") {
		t.Fatalf("tool results %q: want rm refused with the hook model's reason, ls run", results)
	}
	if h.Read(filepath.Join("build", "out.txt")) != "keep me\n" {
		t.Fatalf("%s was deleted", build)
	}
	if len(asked) != 2 {
		t.Fatalf("the hook's model was asked %d times, want once per Bash call", len(asked))
	}
	for _, r := range asked {
		prompt := r.FirstUserText()
		if r.Model != "claude-haiku-5-5" || len(r.Tools) != 0 || !strings.HasPrefix(prompt, "Refuse commands that delete files. The call: {") ||
			!strings.Contains(prompt, `"hook_event_name":"PreToolUse"`) || strings.Contains(prompt, "$ARGUMENTS") {
			t.Fatalf("hook request: model %q, %d tools, prompt %q", r.Model, len(r.Tools), prompt)
		}
	}
}

// TestAgentHookReadsButCannotLeave configures a Stop agent hook that
// checks notes.txt says DONE. The hook's agent (the fake) reads the notes,
// and also tries what a hostile model would: a secret outside the project
// (by its path, by "~" and through a symlink in the project), Write and
// Bash. Only the read inside the project succeeds, the secret
// reaches no request, and the hook's verdict sends the lead back once
// (continueOnBlock) until the notes say DONE.
func TestAgentHookReadsButCannotLeave(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var hookTools [][]string
	var leadSaw []string
	lead := clitest.NewConv()
	var h *clitest.Harness
	h = clitest.New(t, func(r *fakeapi.Request) fakeapi.Reply {
		if !strings.Contains(r.SystemText(), hookQuestion) {
			mu.Lock()
			leadSaw = append(leadSaw, r.LastUserText())
			mu.Unlock()
			return lead.Policy(r)
		}
		if r.Turn() == 0 {
			var names []string
			for _, tl := range r.Tools {
				names = append(names, tl.Name)
			}
			mu.Lock()
			hookTools = append(hookTools, names)
			mu.Unlock()
			return fakeapi.Reply{Content: []fakeapi.Block{
				clitest.Use("Read", map[string]any{"file_path": filepath.Join(h.Dir, "notes.txt")}),
				clitest.Use("Read", map[string]any{"file_path": filepath.Join(h.Home, "secret.txt")}),
				clitest.Use("Read", map[string]any{"file_path": "~/secret.txt"}),
				clitest.Use("Read", map[string]any{"file_path": filepath.Join(h.Dir, "link.txt")}),
				clitest.Use("Write", map[string]any{"file_path": filepath.Join(h.Dir, "pwned.txt"), "content": "x"}),
				clitest.Use("Bash", map[string]any{"command": "touch " + filepath.Join(h.Dir, "pwned.txt")}),
			}}
		}
		res := clitest.ToolResults(r)
		if len(res) == 6 && strings.Contains(res[0], "DONE") {
			return fakeapi.TextReply(`{"ok": true}`)
		}
		return fakeapi.TextReply(`{"ok": false, "reason": "notes.txt does not say DONE yet"}`)
	})
	h.Write("notes.txt", "WIP\n")
	h.Write("../home/secret.txt", "TOP-SECRET-4471\n")
	if err := os.Symlink(filepath.Join(h.Home, "secret.txt"), filepath.Join(h.Dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	lead.On("finish the notes",
		clitest.Text("finished"),
		clitest.Calls(clitest.Use("Read", map[string]any{"file_path": filepath.Join(h.Dir, "notes.txt")})),
		clitest.Calls(clitest.Use("Write", map[string]any{"file_path": filepath.Join(h.Dir, "notes.txt"), "content": "DONE\n"})),
		clitest.Text("finished again"))
	h.Write(".cohort/settings.json", `{"hooks": {"Stop": [{"hooks": [{"type": "agent", "continueOnBlock": true,
  "prompt": "Check that notes.txt in the project says DONE."}]}]}}`)
	out, errOut, code := h.Run("-p", "finish the notes", "--output-format", "json", "--allowedTools", "Read,Write")
	if code != 0 || h.Result(out).Result != "finished again" {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(h.Dir, "pwned.txt")); !os.IsNotExist(err) {
		t.Fatalf("the hook's agent wrote a file: %v", err)
	}
	for _, rec := range h.Srv.Requests() {
		data, _ := json.Marshal(rec.Request)
		if strings.Contains(string(data), "TOP-SECRET-4471") {
			t.Fatalf("the secret outside the project reached a request:\n%s", data)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(hookTools) != 2 {
		t.Fatalf("the hook's agent ran %d times, want 2 (once per Stop)", len(hookTools))
	}
	for _, names := range hookTools {
		slices.Sort(names)
		if !slices.Equal(names, []string{"Glob", "Grep", "Read"}) {
			t.Fatalf("the hook's agent was offered %v, want Read, Grep and Glob only", names)
		}
	}
	if !strings.Contains(strings.Join(leadSaw, "\n"), "notes.txt does not say DONE yet") {
		t.Fatalf("the lead never read the hook's reason: %q", leadSaw)
	}
}
