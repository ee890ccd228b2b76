package cohort

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestNotificationHookBeforeAPrompt: with a CanUseTool callback (someone
// answers), a Notification hook runs before the question is asked and
// reads Claude Code's fields; a session that asks no one fires none.
func TestNotificationHookBeforeAPrompt(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.rt.on("ask me", func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			return fakeapi.Reply{Content: []fakeapi.Block{use("Write", map[string]any{"file_path": filepath.Join(e.dir, "w.txt"), "content": "x"})}}
		}
		return fakeapi.TextReply("done")
	})
	log := filepath.Join(e.dir, "notified.jsonl")
	hooks := `{"hooks": {"Notification": [{"hooks": [{"type": "command", "command": "cat >> ` + log + `; echo >> ` + log + `"}]}]}}`

	cfg := e.config()
	cfg.Settings = []string{hooks}
	collect(t, e.open(cfg), "ask me")
	if _, err := os.Stat(log); err == nil {
		t.Fatal("a session that asks no one fired a Notification hook")
	}

	cfg = e.config()
	cfg.Settings = []string{hooks}
	var atAsk string
	cfg.CanUseTool = func(ctx context.Context, req PermissionRequest) (Decision, error) {
		data, _ := os.ReadFile(log)
		atAsk = string(data)
		return Decision{Allow: true}, nil
	}
	collect(t, e.open(cfg), "ask me")
	if !strings.Contains(atAsk, `"hook_event_name":"Notification"`) || !strings.Contains(atAsk, "permission_prompt") {
		t.Fatalf("when CanUseTool was asked the Notification hook had written %q; want its input, with permission_prompt", atAsk)
	}
}
