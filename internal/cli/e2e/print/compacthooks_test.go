package print

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestCompactHooks crosses a small context window under logging PreCompact
// and PostCompact hooks: each automatic compaction fires PreCompact, then
// PostCompact with the trigger and the summary that replaced the turns.
func TestCompactHooks(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	steps := 0
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		if strings.Contains(r.LastUserText(), "about to be compacted") {
			return fakeapi.TextReply("SUMMARY: eight reads of notes.txt so far.")
		}
		mu.Lock()
		n := steps
		steps++
		mu.Unlock()
		if n < 8 {
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Bash", map[string]any{"command": fmt.Sprintf("echo step %d; cat notes.txt", n)})}}
		}
		return fakeapi.TextReply("done")
	}
	h := clitest.New(t, policy)
	h.Write("notes.txt", strings.Repeat("a long line of notes to fill the context window quickly\n", 120))
	logs := filepath.Join(h.Dir, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	logger := func(ev string) string {
		return h.Write(ev+".sh", `#!/bin/sh
cat > "$(mktemp `+logs+`/`+ev+`.XXXXXX)"
`)
	}
	h.Write(".cohort/settings.json", `{"compaction": {"contextWindow": 20000, "threshold": 0.8, "keepRecent": 4},
  "hooks": {"PreCompact": [{"hooks": [{"type": "command", "command": "sh `+logger("PreCompact")+`"}]}],
            "PostCompact": [{"matcher": "auto", "hooks": [{"type": "command", "command": "sh `+logger("PostCompact")+`"}]}]}}`)
	out, errOut, code := h.Run("-p", "read the notes eight times", "--output-format", "json", "--allowedTools", "Bash")
	if code != 0 || h.Result(out).Result != "done" {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	entries, err := os.ReadDir(logs)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, e := range entries {
		ev, _, _ := strings.Cut(e.Name(), ".")
		count[ev]++
		data, err := os.ReadFile(filepath.Join(logs, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		var in map[string]any
		if err := json.Unmarshal(data, &in); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		if in["hook_event_name"] != ev || in["trigger"] != "auto" {
			t.Fatalf("%s input %v", ev, in)
		}
		if s, _ := in["compact_summary"].(string); ev == "PostCompact" && !strings.Contains(s, "SUMMARY: eight reads") {
			t.Fatalf("PostCompact's compact_summary %q", s)
		}
	}
	if count["PreCompact"] == 0 || count["PostCompact"] != count["PreCompact"] {
		t.Fatalf("PreCompact fired %d times, PostCompact %d: want each compaction to fire both", count["PreCompact"], count["PostCompact"])
	}
}
