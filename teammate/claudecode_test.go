package teammate

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/npmtest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/tool"
)

// claudeCodeTools holds the input schemas of SendMessage and ListAgents
// as Claude Code sends them to the API in its tools array (they are not in
// the SDK's sdk-tools.d.ts). Re-record it with
//
//	COHORT_RECORD_TOOLS=1 go test ./teammate -run TestRecordClaudeCodeTools
const claudeCodeTools = "testdata/claude-code-tools.json"

// claudeCodeVersion is the Claude Code release recorded (cohort.ProtocolVersion).
const claudeCodeVersion = "2.1.332"

// TestRecordClaudeCodeTools runs Claude Code (from npm, via
// internal/npmtest) once in print mode against the fake API, with tool
// search off so that every tool is in the first request, and keeps the
// two tools' input schemas without their descriptions. It runs only when
// asked.
func TestRecordClaudeCodeTools(t *testing.T) {
	if os.Getenv("COHORT_RECORD_TOOLS") == "" {
		t.Skip("records Claude Code's SendMessage and ListAgents schemas; set COHORT_RECORD_TOOLS=1 to re-record " + claudeCodeTools)
	}
	modules := npmtest.Install(t, "@anthropic-ai/claude-code@"+claudeCodeVersion)
	exe := filepath.Join(modules, "node_modules", "@anthropic-ai", "claude-code", "bin", "claude.exe")
	srv := fakeapi.New(fakeapi.Config{})
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-p", "hi", "--output-format", "stream-json", "--verbose")
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "ANTHROPIC_BASE_URL=" + srv.URL, "ANTHROPIC_API_KEY=sk-test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "ENABLE_TOOL_SEARCH=false", "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1"}
	cmd.Stdin = strings.NewReader("")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("claude: %v\n%s", err, out)
	}
	rec := map[string]json.RawMessage{}
	for _, r := range srv.Requests() {
		if r.Request == nil {
			continue
		}
		for _, tl := range r.Request.Tools {
			if tl.Name == "SendMessage" || tl.Name == "ListAgents" {
				var v any
				if err := json.Unmarshal(tl.InputSchema, &v); err != nil {
					t.Fatal(err)
				}
				shape, _ := json.Marshal(withoutDescriptions(v))
				rec[tl.Name] = shape
			}
		}
	}
	if len(rec) != 2 {
		t.Fatalf("Claude Code %s offered %d of SendMessage and ListAgents", claudeCodeVersion, len(rec))
	}
	data, err := json.MarshalIndent(map[string]any{"claude_code": claudeCodeVersion, "input_schemas": rec}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(claudeCodeTools, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// withoutDescriptions drops every "description" key: the recording keeps
// the fields and shapes, which Cohort matches, not Claude Code's prose.
func withoutDescriptions(v any) any {
	switch x := v.(type) {
	case map[string]any:
		delete(x, "description")
		for k, e := range x {
			x[k] = withoutDescriptions(e)
		}
	case []any:
		for i, e := range x {
			x[i] = withoutDescriptions(e)
		}
	}
	return v
}

// TestToolFieldsMatchClaudeCode: ListAgents has exactly Claude Code's
// fields, with its types; SendMessage has every field Claude Code offers,
// with the same types, and keeps Cohort's own (the older flat protocol fields and
// options, which Claude Code offers only for sessions in its cloud).
func TestToolFieldsMatchClaudeCode(t *testing.T) {
	data, err := os.ReadFile(claudeCodeTools)
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		InputSchemas map[string]struct {
			Properties map[string]struct {
				Type string `json:"type"`
			} `json:"properties"`
		} `json:"input_schemas"`
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatalf("%s: %v", claudeCodeTools, err)
	}
	f := newFixture(t)
	ours := map[string]tool.Tool{}
	for _, tl := range f.l.Tools(f.rt) {
		ours[tl.Def().Name] = tl
	}
	notYet := map[string][]string{} // Claude Code's fields Cohort has not built, by tool
	for name, theirs := range rec.InputSchemas {
		tl, ok := ours[name]
		if !ok {
			t.Errorf("Cohort has no %s", name)
			continue
		}
		var mine struct {
			Properties map[string]struct {
				Type string `json:"type"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(tl.Def().InputSchema, &mine); err != nil {
			t.Fatal(err)
		}
		for field, p := range theirs.Properties {
			m, ok := mine.Properties[field]
			switch {
			case !ok && slices.Contains(notYet[name], field):
				t.Logf("%s.%s: not built yet", name, field)
			case !ok:
				t.Errorf("%s lacks Claude Code's field %s", name, field)
			case p.Type != "" && m.Type != "" && p.Type != m.Type:
				t.Errorf("%s.%s is %s, Claude Code's is %s", name, field, m.Type, p.Type)
			}
		}
		if name == "ListAgents" && len(mine.Properties) != len(theirs.Properties) {
			t.Errorf("ListAgents has %d fields, Claude Code's %d", len(mine.Properties), len(theirs.Properties))
		}
	}
}
