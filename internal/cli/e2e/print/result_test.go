package print

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestResultPermissionDenials has the lead and a subagent each make a call
// the permission checks refuse (print mode's "ask" is a deny) and checks
// the result lists both, in Claude Code's shape, through the binary.
func TestResultPermissionDenials(t *testing.T) {
	t.Parallel()
	c := clitest.NewConv()
	h := clitest.New(t, c.Policy)
	target := filepath.Join(h.Dir, "no.txt")
	c.On("deny twice",
		clitest.Calls(clitest.Use("Bash", map[string]any{"command": "touch nope"})),
		clitest.Calls(clitest.Use("Agent", map[string]any{"description": "writer", "prompt": "child: write a file"})),
		clitest.Text("both refused"))
	c.On("child: write a file",
		clitest.Calls(clitest.Use("Write", map[string]any{"file_path": target, "content": "x"})),
		clitest.Text("could not write"))
	out, errOut, code := h.RunBinary("-p", "deny twice", "--output-format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	r := h.Result(out)
	if len(r.PermissionDenials) != 2 {
		t.Fatalf("permission_denials = %+v, want the Bash and the Write call", r.PermissionDenials)
	}
	bash, write := r.PermissionDenials[0], r.PermissionDenials[1]
	if bash.ToolName != "Bash" || bash.ToolInput["command"] != "touch nope" || !strings.HasPrefix(bash.ToolUseID, "toolu_") || bash.Reason == "" {
		t.Fatalf("first denial = %+v", bash)
	}
	if write.ToolName != "Write" || write.ToolInput["file_path"] != target || write.AgentID == "" {
		t.Fatalf("second denial = %+v", write)
	}
	// Each id is the one the model's tool_use carried.
	if !strings.Contains(out, `"permission_denials":[{"tool_name":"Bash","tool_use_id":"`+bash.ToolUseID+`","tool_input":{"command":"touch nope"}`) {
		t.Fatalf("the JSON does not lead with Claude Code's fields:\n%s", out)
	}
}

// TestResultNoDenialsIsEmptyList: a run with nothing refused says so with
// an empty list, as Claude Code does, not a missing field.
func TestResultNoDenialsIsEmptyList(t *testing.T) {
	t.Parallel()
	h := clitest.New(t, func(*fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("fine") })
	out, _, code := h.RunBinary("-p", "hello", "--output-format", "stream-json")
	if code != 0 || !strings.Contains(clitest.LastLine(out), `"permission_denials":[]`) {
		t.Fatalf("exit %d, result: %s", code, clitest.LastLine(out))
	}
}

// TestTextModeDenialSummary: in text mode the run ends with one line on
// stderr naming the refused tools and how to allow them.
func TestTextModeDenialSummary(t *testing.T) {
	t.Parallel()
	c := clitest.NewConv()
	h := clitest.New(t, c.Policy)
	c.On("try bash", clitest.Calls(clitest.Use("Bash", map[string]any{"command": "touch a"}), clitest.Use("Bash", map[string]any{"command": "rm -f b"})),
		clitest.Text("gave up"))
	out, errOut, code := h.RunBinary("-p", "try bash")
	if code != 0 || strings.TrimSpace(out) != "gave up" {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	want := `cohort: 2 tool calls were denied (Bash ×2; first: `
	if !strings.Contains(errOut, want) || !strings.Contains(errOut, `--allowedTools "Bash"`) {
		t.Fatalf("stderr lacks the denial summary %q:\n%s", want, errOut)
	}
	if strings.Count(errOut, "\n") != 1 {
		t.Fatalf("the summary should be one line:\n%s", errOut)
	}
}

// TestStartupErrorPrintsResult: with --output-format json or stream-json, a
// run that cannot start still prints an error result on stdout, and the
// exit code is the one it has without it.
func TestStartupErrorPrintsResult(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		args   []string
		noKey  bool
		code   int
		reason string
	}{
		{"bad flag value", []string{"--max-turns", "many", "-p", "x", "--output-format", "json"}, false, 2, `invalid argument "many"`},
		{"unknown flag", []string{"-p", "x", "--output-format=stream-json", "--no-such-flag"}, false, 2, "unknown flag --no-such-flag"},
		{"bad value checked later", []string{"-p", "x", "--output-format", "json", "--teammate-mode", "screen"}, false, 2, `--teammate-mode "screen"`},
		{"no API key", []string{"-p", "x", "--output-format", "json"}, true, 2, "no API key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := clitest.New(t, func(*fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("unreachable") })
			if tc.noKey {
				delete(h.Vars, "ANTHROPIC_API_KEY")
			}
			out, errOut, code := h.RunBinary(tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tc.code, out, errOut)
			}
			r := h.Result(out)
			if r.Type != "result" || !r.IsError || !strings.Contains(r.Result, tc.reason) || r.UUID == "" {
				t.Fatalf("result = %+v, want an error naming %q", r, tc.reason)
			}
			if !strings.Contains(errOut, tc.reason) {
				t.Fatalf("stderr should still say it:\n%s", errOut)
			}
		})
	}
	// Text mode keeps stdout empty.
	h := clitest.New(t, nil)
	if out, _, code := h.Run("-p", "x", "--max-turns", "many"); code != 2 || out != "" {
		t.Fatalf("text mode: exit %d, stdout %q", code, out)
	}
}

// TestDurationAPIMs: the result's duration_api_ms is the time spent in
// model requests, above zero for a model that takes time to answer and
// within the run's duration_ms.
func TestDurationAPIMs(t *testing.T) {
	t.Parallel()
	h := clitest.New(t, func(*fakeapi.Request) fakeapi.Reply {
		r := fakeapi.TextReply("slow answer")
		r.FirstTokenDelay = 30 * time.Millisecond
		return r
	})
	out, errOut, code := h.RunBinary("-p", "take your time", "--output-format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var r clitest.ResultLine
	if err := json.Unmarshal([]byte(clitest.LastLine(out)), &r); err != nil {
		t.Fatal(err)
	}
	if r.DurationAPIMs < 30 || r.DurationAPIMs > r.DurationMs {
		t.Fatalf("duration_api_ms %d, duration_ms %d: want 30 <= api <= total", r.DurationAPIMs, r.DurationMs)
	}
}
