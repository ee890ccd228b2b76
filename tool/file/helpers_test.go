package file

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cohort-dev/cohort/tool"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newEnv(t *testing.T) *tool.Env {
	t.Helper()
	return &tool.Env{Caller: tool.Caller{Cwd: t.TempDir(), ID: "test"}, Files: tool.NewFileCache()}
}

// call validates input against the tool's schema, as the engine does, then
// runs the tool. Go errors fail the test.
func call(t *testing.T, tl tool.Tool, env *tool.Env, input any) tool.Result {
	t.Helper()
	raw, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	if err := tool.ValidateInput(tl.Def().InputSchema, raw); err != nil {
		t.Fatalf("test input %s does not match the schema: %v", raw, err)
	}
	res, err := tl.Run(t.Context(), env, raw)
	if err != nil {
		t.Fatalf("Run(%s) returned a Go error: %v", raw, err)
	}
	return res
}

// outcome is a result reduced to what tests compare.
type outcome struct {
	Text    string
	IsError bool
}

func outcomeOf(r tool.Result) outcome { return outcome{r.TextOf(), r.IsError} }

func writeTestFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readTestFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// markRead records path as read, as a successful Read would.
func markRead(t *testing.T, env *tool.Env, path string) {
	t.Helper()
	res := call(t, NewRead(ReadConfig{}), env, map[string]any{"file_path": path})
	if res.IsError {
		t.Fatalf("Read %s: %s", path, res.TextOf())
	}
}

// touchLater changes path's content behind the agent's back, making sure the
// modification time moves even on coarse clocks.
func touchLater(t *testing.T, path, content string) {
	t.Helper()
	writeTestFile(t, path, content)
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
}

// denyGuard refuses every path under a prefix.
type denyGuard struct{ prefix string }

func (g denyGuard) CheckWrite(path string) error {
	if strings.HasPrefix(path, g.prefix) {
		return errors.New("outside the worktree")
	}
	return nil
}

func wantContains(t *testing.T, got outcome, isError bool, parts ...string) {
	t.Helper()
	if got.IsError != isError {
		t.Errorf("IsError = %v, want %v; text:\n%s", got.IsError, isError, got.Text)
	}
	for _, p := range parts {
		if !strings.Contains(got.Text, p) {
			t.Errorf("text does not contain %q:\n%s", p, got.Text)
		}
	}
}
