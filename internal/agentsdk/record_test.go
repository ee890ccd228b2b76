package agentsdk

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// saveExchange writes a recorded exchange to
// ../sdkproto/testdata/SCENARIO.jsonl with the run's directories replaced
// by $DIR and $HOME, so that a replay can put its own in their place.
func saveExchange(t *testing.T, recording, scenario, dir, home string) {
	t.Helper()
	data, err := os.ReadFile(recording)
	if err != nil {
		t.Fatalf("no recording: %v", err)
	}
	text := strings.ReplaceAll(string(data), dir, "$DIR")
	text = strings.ReplaceAll(text, home, "$HOME")
	out := filepath.Join("..", "sdkproto", "testdata", scenario+".jsonl")
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
