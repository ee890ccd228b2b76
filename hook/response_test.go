package hook

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/tool/file"
	"github.com/cohort-dev/cohort/tool/shell"
)

// needPython skips, loudly, where python3 is missing: these hooks are
// Python scripts, as many Claude Code users' hooks are (.ci/run installs
// python3).
func needPython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("SKIPPED: python3 is not installed, and these hook scripts are Python; install python3 to run this test")
	}
}

// calls is a model that makes the given tool calls, one per turn, then
// ends; it keeps every tool_result it gets back.
func calls(results *[]llm.Block, uses ...llm.Block) llm.Model {
	return replyFunc(func(req *llm.Request) *llm.Response {
		last := req.Messages[len(req.Messages)-1]
		for _, b := range last.Content {
			if b.Type == llm.BlockToolResult {
				*results = append(*results, b)
			}
		}
		if n := len(*results); n < len(uses) {
			return &llm.Response{Content: []llm.Block{uses[n]}, StopReason: llm.StopToolUse}
		}
		return &llm.Response{Content: []llm.Block{llm.Text("done")}, StopReason: llm.StopEndTurn}
	})
}

func use(id, name string, input any) llm.Block {
	raw, _ := json.Marshal(input)
	return llm.ToolUse(id, name, raw)
}

// TestScriptsReadToolResponse runs the real Write and Bash tools in an
// engine with a PostToolUse hook written the way Claude Code users write
// them: a Python script that reads tool_response.filePath (Write) and
// tool_response.stdout (Bash) and answers with additionalContext. Before
// tool_response was the structured result, the script failed on a string.
func TestScriptsReadToolResponse(t *testing.T) {
	needPython(t)
	dir := t.TempDir()
	hookScript := filepath.Join(dir, "post.py")
	writeFileT(t, hookScript, `import json, sys
data = json.load(sys.stdin)
resp = data["tool_response"]
if data["tool_name"] == "Write":
    said = "wrote " + resp["filePath"] + " (" + resp["type"] + ")"
else:
    said = "bash printed " + resp["stdout"].strip() + "; interrupted=" + str(resp["interrupted"])
assert isinstance(data["duration_ms"], int), data["duration_ms"]
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": said}}))
`)
	r := newRunner(t, Config{}, spec{event: PostToolUse, matcher: "Write|Bash", cmd: "python3 " + hookScript})
	target := filepath.Join(dir, "notes.txt")
	var results []llm.Block
	a := engine.New(engine.Config{
		Model: calls(&results,
			use("toolu_w", "Write", map[string]string{"file_path": target, "content": "hi\n"}),
			use("toolu_b", "Bash", map[string]string{"command": "echo from-bash"})),
		Tools: []tool.Tool{file.NewWrite(), shell.NewBash(shell.Config{})},
		Env:   tool.Env{Caller: tool.Caller{Cwd: dir}},
		Hooks: r.For(Subject{Caller: tool.Caller{Cwd: dir}}),
	})
	if _, err := a.Send(t.Context(), []llm.Block{llm.Text("go")}, ""); err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 {
		t.Fatalf("results = %v", results)
	}
	for i, want := range []string{"[PostToolUse hook] wrote " + target + " (create)", "[PostToolUse hook] bash printed from-bash; interrupted=False"} {
		if text := llm.JoinText(results[i].Content); results[i].IsError || !strings.Contains(text, want) {
			t.Errorf("result %d = %q (is_error %v), want it to contain %q", i, text, results[i].IsError, want)
		}
	}
}

// TestToolResponseFallsBackToText: a tool without a structured result
// gives its text, as a JSON string.
func TestToolResponseFallsBackToText(t *testing.T) {
	res := tool.Text("plain")
	if got := string(toolResponse(&res)); got != `"plain"` {
		t.Errorf("tool_response = %s", got)
	}
	res.Response = map[string]any{"a": 1}
	if got := string(toolResponse(&res)); got != `{"a":1}` {
		t.Errorf("tool_response = %s", got)
	}
}
