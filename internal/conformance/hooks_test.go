package conformance

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// hookRecord is one event's entry in expected/hooks.json: the input keys
// Claude Code sent, and the JSON type of tool_response.
type hookRecord struct {
	Count            int      `json:"count"`
	Keys             []string `json:"keys"`
	ToolResponseType []string `json:"tool_response_type"`
	TranscriptExists bool     `json:"transcript_exists"`
	CwdIsProject     bool     `json:"cwd_is_project"`
}

// TestHookInputsAsClaudeCodeSendsThem runs the scripted sequence with
// logging hooks on PreToolUse and PostToolUse and compares what they read
// on stdin with expected/hooks.json (the disler-loggers scenario, whose
// hooks log every input): every key Claude Code sent is there, tool_response
// is an object for all six tools, the transcript exists and cwd is the
// project. Keys Cohort adds (its agent fields) are listed, not failed.
func TestHookInputsAsClaudeCodeSendsThem(t *testing.T) {
	dir := corpus(t)
	var exp struct {
		Hooks map[string]struct {
			Fields map[string]hookRecord `json:"fields"`
		} `json:"hooks"`
	}
	readJSON(t, filepath.Join(dir, "expected", "hooks.json"), &exp)
	want := exp.Hooks["disler-loggers"].Fields
	if len(want) == 0 {
		t.Fatal("expected/hooks.json has no disler-loggers fields")
	}
	sc := newScenario(t)
	logs := filepath.Join(sc.home, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	logger := func(ev string) map[string]any {
		return map[string]any{"hooks": []any{map[string]any{"type": "command",
			"command": fmt.Sprintf(`(cat; echo) >> %s/%s.jsonl`, logs, ev)}}}
	}
	// The loggers run in the sandbox: their folder is one they may write.
	writeSettings(t, sc, map[string]any{"sandbox": map[string]any{"allowWrite": []string{logs}}, "hooks": map[string]any{
		"PreToolUse": []any{logger("PreToolUse")}, "PostToolUse": []any{logger("PostToolUse")}}})
	got, out := sc.run()
	if got.Steps != "oooooo" {
		t.Fatalf("the sequence did not run cleanly: %+v\n%s", got, out)
	}
	for _, ev := range []string{"PreToolUse", "PostToolUse"} {
		w := want[ev]
		inputs := readLines(t, filepath.Join(logs, ev+".jsonl"))
		if len(inputs) != w.Count {
			t.Errorf("%s fired %d times, Claude Code %d", ev, len(inputs), w.Count)
		}
		var extra []string
		for i, in := range inputs {
			for _, k := range w.Keys {
				if _, ok := in[k]; !ok {
					t.Errorf("%s input %d lacks %q, which Claude Code sends: %v", ev, i, k, in)
				}
			}
			for k := range in {
				if !slices.Contains(w.Keys, k) && !slices.Contains(extra, k) {
					extra = append(extra, k)
				}
			}
			if path, _ := in["transcript_path"].(string); w.TranscriptExists && !exists(path) {
				t.Errorf("%s input %d: transcript_path %q does not exist", ev, i, path)
			}
			if cwd, _ := in["cwd"].(string); w.CwdIsProject && cwd != sc.project {
				t.Errorf("%s input %d: cwd %q, want the project %q", ev, i, cwd, sc.project)
			}
			if w.ToolResponseType != nil {
				if _, ok := in["tool_response"].(map[string]any); !ok {
					t.Errorf("%s input %d (%v): tool_response is %T, Claude Code sends an object", ev, i, in["tool_name"], in["tool_response"])
				}
			}
		}
		slices.Sort(extra)
		t.Logf("%s: %d inputs with Claude Code's %d keys; Cohort's additions: %s", ev, len(inputs), len(w.Keys), strings.Join(extra, ", "))
	}
	post := readLines(t, filepath.Join(sc.home, "logs", "PostToolUse.jsonl"))
	if len(post) == len(sc.calls) {
		write, bash := post[0]["tool_response"].(map[string]any), post[5]["tool_response"].(map[string]any)
		if write["filePath"] != sc.file() || write["type"] != "create" || !strings.Contains(fmt.Sprint(bash["stdout"]), "notes.txt") {
			t.Errorf("Write's tool_response %v, Bash's %v", write, bash)
		}
	}
}

// TestIfGuardBlocksOnlyItsFiles is a .env guard as Claude Code users write
// it: a PreToolUse hook on Write|Edit with "if": "Write(.env*)" that exits
// 2. The sequence (which writes notes.txt) runs as under Claude Code
// ("oooooo"; before "if" was read the guard blocked every Write), and a
// Write of .env.local is blocked with the guard's message.
func TestIfGuardBlocksOnlyItsFiles(t *testing.T) {
	t.Parallel()
	guard := map[string]any{"matcher": "Write|Edit", "hooks": []any{map[string]any{"type": "command",
		"if": "Write(.env*)", "command": `cat >/dev/null; echo "secrets stay out of .env files" >&2; exit 2`}}}
	settings := map[string]any{"hooks": map[string]any{"PreToolUse": []any{guard}}}
	sc := newScenario(t)
	writeSettings(t, sc, settings)
	if got, out := sc.run(); got.Steps != "oooooo" {
		t.Fatalf("steps %s, want oooooo (Claude Code's record):\n%s", got.Steps, out)
	}
	sc = newScenario(t)
	writeSettings(t, sc, settings)
	env := filepath.Join(sc.project, ".env.local")
	sc.override = map[int]map[string]any{0: {"file_path": env, "content": "TOKEN=1\n"}}
	got, out := sc.run()
	if got.Steps[0] != 'x' || !strings.Contains(sc.resultText(0), "secrets stay out of .env files") || exists(env) {
		t.Fatalf("the Write of .env.local was not blocked: %+v %q\n%s", got, sc.resultText(0), out)
	}
}

func writeSettings(t *testing.T, sc *scenario, v any) {
	t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(sc.project, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func readLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("no hook input was logged: %v", err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: a hook input is not JSON: %v\n%s", path, err, sc.Text())
		}
		out = append(out, m)
	}
	return out
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return path != "" && err == nil
}
