package crew

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/task"
)

// TestKilledResultInWords: a killed agent's result is its last message and
// last calls in words; a transcript with bad lines or none at all says so;
// a Bash task's output is not an agent's (ok false: the tail is quoted).
func TestKilledResultInWords(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.output")
	lines := `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"go"}]}}
{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Half done."},{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"a.go"}}]}}
not json
{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"go test ./..."}}]}}
`
	if err := os.WriteFile(path, []byte(lines), 0o600); err != nil {
		t.Fatal(err)
	}
	got, ok := KilledResult(task.Pending{Kind: task.KindLocalAgent, OutputFile: path})
	for _, want := range []string{"1 line(s) of its transcript could not be read", "Its last message:\nHalf done.", "Its last tool calls (2 in all): Read (a.go); Bash (go test ./...)."} {
		if !ok || !strings.Contains(got, want) {
			t.Errorf("result lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, `{"`) {
		t.Errorf("result quotes JSON:\n%s", got)
	}
	got, ok = KilledResult(task.Pending{Kind: task.KindTeammate, OutputFile: filepath.Join(dir, "gone.output")})
	if !ok || !strings.Contains(got, "its transcript cannot be read") {
		t.Errorf("missing transcript: %q", got)
	}
	if _, ok := KilledResult(task.Pending{Kind: task.KindLocalBash, OutputFile: path}); ok {
		t.Error("a Bash task's output was read as a transcript")
	}
}
