package hook

import (
	"context"
	"encoding/json"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/tool/file"
)

// replyFunc is a model in a function: it sees each request and answers.
type replyFunc func(req *llm.Request) *llm.Response

func (f replyFunc) Stream(ctx context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(llm.Event{}, err)
			return
		}
		yield(llm.Event{Type: llm.EventDone, Response: f(req)}, nil)
	}
}

// writeOnce is a model that asks for one Write call and then stops,
// keeping the tool_result it got back.
func writeOnce(path, content string, result *llm.Block) llm.Model {
	input, _ := json.Marshal(map[string]string{"file_path": path, "content": content})
	return replyFunc(func(req *llm.Request) *llm.Response {
		last := req.Messages[len(req.Messages)-1]
		for _, b := range last.Content {
			if b.Type == llm.BlockToolResult {
				*result = b
				return &llm.Response{Content: []llm.Block{llm.Text("ok")}, StopReason: llm.StopEndTurn}
			}
		}
		return &llm.Response{Content: []llm.Block{llm.ToolUse("toolu_w", "Write", input)}, StopReason: llm.StopToolUse}
	})
}

// TestEngineBlocksWriteInNestedSubagent runs the real Write tool in an
// engine.Conversation at depth 2 whose hooks come from settings: the hook reads
// the depth from its input and denies, and the model gets an is_error
// result holding the hook's stderr. The same hook lets the lead write.
func TestEngineBlocksWriteInNestedSubagent(t *testing.T) {
	dir := t.TempDir()
	guard := script(t, dir, "guard.sh", `in=$(cat)
printf '%s' "$in" > "`+dir+`/seen-$(printf '%s' "$in" | sed -n 's/.*"agent_id":"\([^"]*\)".*/\1/p').json"
case "$in" in
*'"depth":0'*) exit 0 ;;
esac
echo "subagents may not write files; report the change instead" >&2
exit 2`)
	r := newRunner(t, Config{}, spec{event: PreToolUse, matcher: "Write|Edit", cmd: guard})

	run := func(id string, depth int, target string) llm.Block {
		var result llm.Block
		a := engine.New(engine.Config{
			Model: writeOnce(target, "hello\n", &result),
			Tools: []tool.Tool{file.NewWrite()},
			Env:   tool.Env{Caller: tool.Caller{Cwd: dir, ID: id, Depth: depth}},
			Hooks: r.For(Subject{Caller: tool.Caller{ID: id, Type: "general-purpose", Depth: depth, Cwd: dir, ParentToolUseID: "toolu_spawn"}}),
		})
		if _, err := a.Send(t.Context(), []llm.Block{llm.Text("write it")}, ""); err != nil {
			t.Fatal(err)
		}
		return result
	}

	nested := filepath.Join(dir, "nested.txt")
	res := run("sub2", 2, nested)
	if !res.IsError || !strings.Contains(llm.JoinText(res.Content), "subagents may not write files; report the change instead") {
		t.Fatalf("depth 2 result: is_error=%v %q", res.IsError, llm.JoinText(res.Content))
	}
	if _, err := os.Stat(nested); !os.IsNotExist(err) {
		t.Errorf("the blocked Write created %s (stat: %v)", nested, err)
	}
	seen := readJSON(t, filepath.Join(dir, "seen-sub2.json"))
	if seen["depth"] != 2.0 || seen["agent_id"] != "sub2" || seen["tool_name"] != "Write" || seen["parent_tool_use_id"] != "toolu_spawn" {
		t.Errorf("hook input = %v", seen)
	}

	lead := filepath.Join(dir, "lead.txt")
	if res := run("lead", 0, lead); res.IsError {
		t.Fatalf("lead's Write failed: %q", llm.JoinText(res.Content))
	}
	if got := readFile(t, lead); got != "hello\n" {
		t.Errorf("lead wrote %q", got)
	}
}

// TestEngineRewriteAndFeedback rewrites a Write's input in PreToolUse and
// adds PostToolUse feedback, through the engine.
func TestEngineRewriteAndFeedback(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "out.txt")
	rewrite := script(t, dir, "rewrite.sh", `cat >/dev/null
printf '%s\n' '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow", "updatedInput": {"file_path": "`+target+`", "content": "sanitized\n"}}}'`)
	feedback := script(t, dir, "feedback.sh", `cat >/dev/null; echo "remember to run go vet" >&2; exit 2`)
	r := newRunner(t, Config{},
		spec{event: PreToolUse, matcher: "Write", cmd: rewrite},
		spec{event: PostToolUse, matcher: "Write", cmd: feedback})
	var result llm.Block
	a := engine.New(engine.Config{
		Model: writeOnce(filepath.Join(dir, "elsewhere.txt"), "secret\n", &result),
		Tools: []tool.Tool{file.NewWrite()},
		Env:   tool.Env{Caller: tool.Caller{Cwd: dir}},
		Hooks: r.For(Subject{Caller: tool.Caller{Cwd: dir}}),
		Gate:  askAll{}, // the hook's allow stands in for the approval the gate would ask for
	})
	if _, err := a.Send(t.Context(), []llm.Block{llm.Text("write")}, ""); err != nil {
		t.Fatal(err)
	}
	if result.IsError {
		t.Fatalf("result is an error: %q", llm.JoinText(result.Content))
	}
	if got := readFile(t, target); got != "sanitized\n" {
		t.Errorf("wrote %q, want the rewritten content", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "elsewhere.txt")); !os.IsNotExist(err) {
		t.Errorf("the original path was written")
	}
	if text := llm.JoinText(result.Content); !strings.Contains(text, "[PostToolUse hook] remember to run go vet") {
		t.Errorf("result %q lacks the PostToolUse feedback", text)
	}
}

// askAll stands for a permission gate with no rule for the call: it would
// ask, so it denies unless a hook pre-approved the call (Call.HookApproved),
// which is how the real gate treats a hook's allow.
type askAll struct{}

func (askAll) Check(_ context.Context, c *engine.Call) engine.Verdict {
	if c.HookApproved {
		return engine.Verdict{Allow: true}
	}
	return engine.Verdict{Reason: "the gate says no"}
}
