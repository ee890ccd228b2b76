package agentdef

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCLI(t *testing.T) {
	defs, warns, errs := ParseCLI(`{
		"reviewer": {"description": "Reviews code", "prompt": "  You review.  ", "tools": ["Read", "Grep"], "model": "opus"},
		"worker": {"description": "Does work", "prompt": "Work.", "tools": "Read, Edit", "maxTurns": 5,
		           "background": true, "permissionMode": "acceptEdits", "mcpServers": {"fs": {"command": "fs-mcp"}}}
	}`, known)
	if len(errs) != 0 || len(warns) != 0 {
		t.Fatalf("errors %v, warnings %v", errs, warns)
	}
	src := Source{Level: LevelCLI, Path: CLIPath}
	want := []*Definition{
		{Name: "reviewer", Description: "Reviews code", Prompt: "You review.", Tools: []string{"Read", "Grep"}, Model: "opus", Source: src},
		{Name: "worker", Description: "Does work", Prompt: "Work.", Tools: []string{"Read", "Edit"}, MaxTurns: 5,
			Background: true, PermissionMode: "acceptEdits", MCPServers: map[string]any{"fs": map[string]any{"command": "fs-mcp"}}, Source: src},
	}
	if diff := cmp.Diff(want, defs); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParseCLIProblems(t *testing.T) {
	tests := []struct {
		name     string
		json     string
		loaded   []string
		errSays  []string
		errLine  int
		warnSays []string
	}{
		{name: "empty", json: "  "},
		{name: "syntax", json: "{\n\"x\": {\"description\": \"d\",}\n}", errSays: []string{"--agents:2:", "not valid JSON"}, errLine: 2},
		{name: "not an object", json: `["x"]`, errSays: []string{"want a JSON object"}},
		{name: "null", json: `null`, errSays: []string{"got null"}},
		{name: "entry not an object", json: `{"x": "prompt", "y": {"description": "d", "prompt": "p"}}`,
			loaded: []string{"y"}, errSays: []string{`agent "x": want an object`}},
		{name: "bad entry, good entry", json: `{"bad": {"description": "d", "model": 5, "maxTurns": -1}, "good": {"description": "d", "prompt": "p"}}`,
			loaded: []string{"good"}, errSays: []string{`--agents: agent "bad": maxTurns: want a whole number above 0`}},
		{name: "invalid name", json: `{"no spaces": {"description": "d", "prompt": "p"}}`, errSays: []string{`name "no spaces" is not valid`}},
		{name: "missing description", json: `{"x": {"prompt": "p"}}`, errSays: []string{`agent "x": "description" is required`}},
		{name: "name disagrees", json: `{"x": {"name": "y", "description": "d", "prompt": "p"}}`, errSays: []string{`differs from the entry's key "x"`}},
		{name: "name agrees", json: `{"x": {"name": "x", "description": "d", "prompt": "p"}}`, loaded: []string{"x"}},
		{name: "unknown key and tool", json: `{"x": {"description": "d", "prompt": "p", "colour": "red", "tools": ["Read", "Zap"]}}`,
			loaded: []string{"x"}, warnSays: []string{`--agents: agent "x": unknown key "colour" ignored`, `agent "x": tools: unknown tool "Zap" ignored`}},
		{name: "no prompt", json: `{"x": {"description": "d"}}`, loaded: []string{"x"}, warnSays: []string{`agent "x": no "prompt"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defs, warns, errs := ParseCLI(tt.json, known)
			var names []string
			for _, d := range defs {
				names = append(names, d.Name)
			}
			if diff := cmp.Diff(tt.loaded, names); diff != "" {
				t.Errorf("loaded (-want +got):\n%s", diff)
			}
			joined := errors.Join(errs...)
			if len(tt.errSays) == 0 && joined != nil {
				t.Errorf("unexpected errors: %v", joined)
			}
			for _, s := range tt.errSays {
				if joined == nil || !strings.Contains(joined.Error(), s) {
					t.Errorf("errors %v do not say %q", joined, s)
				}
			}
			if tt.errLine != 0 {
				var pe *ParseError
				if !errors.As(joined, &pe) || pe.Line != tt.errLine {
					t.Errorf("error line: %v", joined)
				}
			}
			var ws []string
			for _, w := range warns {
				ws = append(ws, w.String())
			}
			for _, s := range tt.warnSays {
				if !strings.Contains(strings.Join(ws, "\n"), s) {
					t.Errorf("warnings %q do not say %q", ws, s)
				}
			}
		})
	}
}

func FuzzParseCLI(f *testing.F) {
	for _, s := range []string{
		`{"x": {"description": "d", "prompt": "p"}}`,
		`{"x": {"description": "d", "tools": "Read, Agent(a, b)", "maxTurns": 3, "hooks": {"Stop": []}}}`,
		`{"x": null}`, `[]`, `{`, `{"": {}}`, `{"x": {"maxTurns": 1e400}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		defs, _, errs := ParseCLI(s, known)
		for _, err := range errs {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Path != CLIPath {
				t.Fatalf("error does not name --agents: %v", err)
			}
		}
		for _, d := range defs {
			if !NamePattern.MatchString(d.Name) || d.Description == "" || d.Source.Level != LevelCLI {
				t.Fatalf("accepted an invalid definition: %+v", d)
			}
		}
	})
}
