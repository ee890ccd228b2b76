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
)

// claudeCodeTools holds the input schemas of SendMessage and ListAgents
// as Claude Code sends them to the API in its tools array (they are not in
// the SDK's sdk-tools.d.ts). Re-record it with
//
//	COHORT_RECORD_TOOLS=1 go test ./teammate -run TestRecordClaudeCodeTools
const claudeCodeTools = "testdata/claude-code-tools.json"

// claudeCodeVersion is the Claude Code release recorded (cohort.ProtocolVersion).
const claudeCodeVersion = "2.1.332"

// sessionServiceEnv is what makes Claude Code 2.1.332 offer the
// SendMessage of a session that sends through its session service (a
// cloud or Remote Control session): options (priority, session_name) and
// the "@find"/"@parent" addresses are offered only there.
var sessionServiceEnv = []string{"CLAUDE_CODE_REMOTE=1", "CLAUDE_CODE_ENTRYPOINT=remote", "CLAUDE_CODE_SENDS_VIA_SESSION_SERVICE=2"}

// TestRecordClaudeCodeTools runs Claude Code (from npm, via
// internal/npmtest) twice in print mode against the fake API, with tool
// search off so that every tool is in the first request: once as on a
// user's machine, once as a session-service session (sessionServiceEnv),
// and keeps the tools' input schemas without their descriptions. It runs
// only when asked.
func TestRecordClaudeCodeTools(t *testing.T) {
	if os.Getenv("COHORT_RECORD_TOOLS") == "" {
		t.Skip("records Claude Code's SendMessage and ListAgents schemas; set COHORT_RECORD_TOOLS=1 to re-record " + claudeCodeTools)
	}
	modules := npmtest.Install(t, "@anthropic-ai/claude-code@"+claudeCodeVersion)
	exe := filepath.Join(modules, "node_modules", "@anthropic-ai", "claude-code", "bin", "claude.exe")
	local := recordTools(t, exe, nil)
	if len(local) != 2 {
		t.Fatalf("Claude Code %s offered %d of SendMessage and ListAgents", claudeCodeVersion, len(local))
	}
	service := recordTools(t, exe, sessionServiceEnv)
	if service["SendMessage"] == nil {
		t.Fatalf("Claude Code %s offered no SendMessage with %v", claudeCodeVersion, sessionServiceEnv)
	}
	data, err := json.MarshalIndent(map[string]any{"claude_code": claudeCodeVersion, "input_schemas": local,
		"session_service": map[string]any{"env": sessionServiceEnv, "input_schemas": map[string]json.RawMessage{"SendMessage": service["SendMessage"]}}}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(claudeCodeTools, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// recordTools runs Claude Code once with env added and returns the shapes
// of the SendMessage and ListAgents it offered.
func recordTools(t *testing.T, exe string, env []string) map[string]json.RawMessage {
	srv := fakeapi.New(fakeapi.Config{})
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, "-p", "hi", "--output-format", "stream-json", "--verbose")
	cmd.Dir = t.TempDir()
	cmd.Env = append([]string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH"), "ANTHROPIC_BASE_URL=" + srv.URL, "ANTHROPIC_API_KEY=sk-test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "ENABLE_TOOL_SEARCH=false", "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS=1"}, env...)
	cmd.Stdin = strings.NewReader("")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("claude %v: %v\n%s", env, err, out)
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
	return rec
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

// shape is the part of a JSON schema the comparison reads.
type shape struct {
	Type       string           `json:"type"`
	Enum       []string         `json:"enum"`
	Properties map[string]shape `json:"properties"`
}

// TestToolFieldsMatchClaudeCode: ListAgents has exactly Claude Code's
// fields, with its types; SendMessage has every field Claude Code offers,
// on a user's machine and in a session-service session (options with
// priority and session_name), with the same types and enums, and keeps
// Cohort's own (the older flat protocol fields).
func TestToolFieldsMatchClaudeCode(t *testing.T) {
	data, err := os.ReadFile(claudeCodeTools)
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		InputSchemas   map[string]shape `json:"input_schemas"`
		SessionService struct {
			InputSchemas map[string]shape `json:"input_schemas"`
		} `json:"session_service"`
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatalf("%s: %v", claudeCodeTools, err)
	}
	if rec.SessionService.InputSchemas["SendMessage"].Properties["options"].Properties == nil {
		t.Fatalf("%s has no session-service SendMessage with options", claudeCodeTools)
	}
	f := newFixture(t)
	ours := map[string]shape{}
	for _, tl := range f.l.Tools(f.rt) {
		var mine shape
		if err := json.Unmarshal(tl.Def().InputSchema, &mine); err != nil {
			t.Fatal(err)
		}
		ours[tl.Def().Name] = mine
	}
	for _, variant := range []map[string]shape{rec.InputSchemas, rec.SessionService.InputSchemas} {
		for name, theirs := range variant {
			mine, ok := ours[name]
			if !ok {
				t.Errorf("Cohort has no %s", name)
				continue
			}
			compareFields(t, name, mine, theirs)
		}
	}
	if n, m := len(ours["ListAgents"].Properties), len(rec.InputSchemas["ListAgents"].Properties); n != m {
		t.Errorf("ListAgents has %d fields, Claude Code's %d", n, m)
	}
}

// compareFields reports each of theirs' fields that mine lacks or types
// differently, and their enums, down through nested objects.
func compareFields(t *testing.T, path string, mine, theirs shape) {
	t.Helper()
	for field, p := range theirs.Properties {
		m, ok := mine.Properties[field]
		switch {
		case !ok:
			t.Errorf("%s lacks Claude Code's field %s", path, field)
			continue
		case p.Type != "" && m.Type != "" && p.Type != m.Type:
			t.Errorf("%s.%s is %s, Claude Code's is %s", path, field, m.Type, p.Type)
		case !slices.Equal(p.Enum, m.Enum):
			t.Errorf("%s.%s takes %q, Claude Code's %q", path, field, m.Enum, p.Enum)
		}
		compareFields(t, path+"."+field, m, p)
	}
}
