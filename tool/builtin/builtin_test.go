package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"iter"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/tool/todo"
	"github.com/cohort-dev/cohort/tool/web"
)

var update = flag.Bool("update", false, "rewrite testdata/defs.golden")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// render shows the tool definitions byte for byte as the model gets them.
func render(tools []tool.Tool) []byte {
	var b bytes.Buffer
	for _, t := range tools {
		d := t.Def()
		b.WriteString("## " + d.Name + "\n\n" + d.Description + "\n\n")
		b.Write(d.InputSchema)
		b.WriteString("\n\n")
	}
	return b.Bytes()
}

// TestDefsGolden pins the tools' prose and schemas: they are the cached
// prefix of every request. Run with -update after a deliberate change.
func TestDefsGolden(t *testing.T) {
	got := render(All(Config{Search: web.SearchConfig{Model: noModel{}}}))
	path := filepath.Join("testdata", "defs.golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("tool definitions changed (-golden +got); run with -update if intended:\n%s", diff)
	}
	if again := render(All(Config{Search: web.SearchConfig{Model: noModel{}}})); !bytes.Equal(again, got) {
		t.Errorf("definitions differ between two builds")
	}
}

// noModel stands for a model with server-side search; the definitions
// never call it.
type noModel struct{}

func (noModel) Stream(context.Context, *llm.Request) iter.Seq2[llm.Event, error] {
	return func(func(llm.Event, error) bool) {}
}

// TestWebSearchNeedsASearchModel: without a model whose provider searches,
// there is no WebSearch tool (definitions naming it get a warning instead).
func TestWebSearchNeedsASearchModel(t *testing.T) {
	for _, tl := range All(Config{}) {
		if tl.Def().Name == "WebSearch" {
			t.Fatal("WebSearch is offered without a search model")
		}
	}
}

func TestAll(t *testing.T) {
	todos := todo.New(todo.Config{})
	tools := All(Config{Todos: todos, Search: web.SearchConfig{Model: noModel{}}})
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Def().Name)
	}
	if diff := cmp.Diff(Names, names); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	if tools[len(tools)-1] != tool.Tool(todos) {
		t.Errorf("the given TodoWrite is not used")
	}
	want := map[string]tool.Traits{
		"Bash": {}, "Glob": {ReadOnly: true, ConcurrencySafe: true}, "Grep": {ReadOnly: true, ConcurrencySafe: true},
		"Read": {ReadOnly: true, ConcurrencySafe: true}, "Edit": {}, "Write": {}, "NotebookEdit": {},
		"WebFetch": {ConcurrencySafe: true}, "TodoWrite": {ReadOnly: true, ConcurrencySafe: true},
		"LS": {ReadOnly: true, ConcurrencySafe: true}, "MultiEdit": {}, "WebSearch": {ReadOnly: true, ConcurrencySafe: true},
	}
	for _, tl := range tools {
		d := tl.Def()
		if got := tl.Traits(nil); got != want[d.Name] {
			t.Errorf("%s traits = %+v, want %+v", d.Name, got, want[d.Name])
		}
		if d.Description == "" || !json.Valid(d.InputSchema) {
			t.Errorf("%s: empty description or invalid schema", d.Name)
		}
		// The validator understands every schema: an empty input only
		// lacks required fields, and an unknown field is refused.
		err := tool.ValidateInput(d.InputSchema, json.RawMessage(`{"no_such_field":1}`))
		var ie *tool.InputError
		if !errors.As(err, &ie) {
			t.Errorf("%s: validation error %v is not an input error", d.Name, err)
		} else if !bytes.Contains([]byte(err.Error()), []byte(`unknown field "no_such_field"`)) {
			t.Errorf("%s: unknown field not reported: %v", d.Name, err)
		}
	}
}

// TestFieldNames pins the input fields to Claude Code's.
func TestFieldNames(t *testing.T) {
	want := map[string][]string{
		"Bash":         {"command", "timeout", "description", "run_in_background", "dangerouslyDisableSandbox"},
		"Glob":         {"pattern", "path"},
		"Grep":         {"pattern", "path", "glob", "output_mode", "-A", "-B", "-C", "context", "-n", "-i", "type", "head_limit", "offset", "multiline"},
		"Read":         {"file_path", "offset", "limit"},
		"Edit":         {"file_path", "old_string", "new_string", "replace_all"},
		"Write":        {"file_path", "content"},
		"NotebookEdit": {"notebook_path", "cell_id", "new_source", "cell_type", "edit_mode"},
		"WebFetch":     {"url", "prompt"},
		"TodoWrite":    {"todos"},
		"LS":           {"path", "ignore"},
		"MultiEdit":    {"file_path", "edits"},
		"WebSearch":    {"query", "allowed_domains", "blocked_domains"},
	}
	for _, tl := range All(Config{Search: web.SearchConfig{Model: noModel{}}}) {
		d := tl.Def()
		var s struct {
			Properties json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(d.InputSchema, &s); err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(s.Properties))
		var got []string
		dec.Token() // {
		for dec.More() {
			k, _ := dec.Token()
			got = append(got, k.(string))
			var skip json.RawMessage
			_ = dec.Decode(&skip)
		}
		if diff := cmp.Diff(want[d.Name], got); diff != "" {
			t.Errorf("%s fields (-want +got):\n%s", d.Name, diff)
		}
	}
}
