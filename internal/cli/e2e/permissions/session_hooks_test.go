package permissions

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestSessionHooksThroughTheCLI configures SessionStart (whose output is
// context for the model), SessionEnd (which writes a file) and a
// PermissionRequest hook that allows a Write print mode would deny: the
// model sees the start context, the end hook ran with the session's id,
// and the write happened.
func TestSessionHooksThroughTheCLI(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var firstSeen, target string
	h := clitest.New(t, func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			mu.Lock()
			firstSeen = r.LastUserText()
			path := target
			mu.Unlock()
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Write", map[string]any{"file_path": path, "content": "written"})}}
		}
		return fakeapi.TextReply("done")
	})
	mu.Lock()
	target = filepath.Join(h.Dir, "allowed.txt")
	mu.Unlock()
	ended := filepath.Join(h.Dir, "ended.json")
	// The scripts live outside the project: a folder holding hook scripts
	// is protected, and a hook's allow is not a person's approval, so an
	// allowed.txt beside them would stay shut (attack5 E2).
	scripts := t.TempDir()
	start := writeScript(t, scripts, "start.sh", "cat >/dev/null\necho 'the deploy window is closed today'\n")
	end := writeScript(t, scripts, "end.sh", "cat > "+ended+"\n")
	allow := writeScript(t, scripts, "allow.sh", `cat >/dev/null
echo '{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}'
`)
	h.Write(".cohort/settings.json", `{"hooks": {
  "SessionStart": [{"hooks": [{"type": "command", "command": "`+start+`"}]}],
  "SessionEnd": [{"hooks": [{"type": "command", "command": "`+end+`"}]}],
  "PermissionRequest": [{"matcher": "Write", "hooks": [{"type": "command", "command": "`+allow+`"}]}]
}}`)
	out, errOut, code := h.Run("-p", "write the file", "--output-format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	mu.Lock()
	seen := firstSeen
	mu.Unlock()
	if !strings.Contains(seen, "the deploy window is closed today") {
		t.Errorf("the SessionStart hook's output did not reach the model; its first message: %q", seen)
	}
	if data, err := os.ReadFile(target); err != nil || string(data) != "written" {
		t.Errorf("the PermissionRequest hook's allow did not let the Write through: %q, %v\n%s", data, err, out)
	}
	r := h.Result(out)
	data, err := os.ReadFile(ended)
	if err != nil {
		t.Fatalf("the SessionEnd hook did not run: %v", err)
	}
	if !strings.Contains(string(data), `"SessionEnd"`) || !strings.Contains(string(data), r.SessionID) {
		t.Errorf("the SessionEnd hook's input does not name the event and the session %s: %s", r.SessionID, data)
	}
}
