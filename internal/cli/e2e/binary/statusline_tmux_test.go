package binary

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestStatusLineRunsConfinedInTmux: the real binary's terminal UI runs the
// project settings' statusLine through the session (the command line
// hands the UI the session's runner), so it runs in the sandbox: its line
// shows under the input, and the file it tries to write outside the
// project is refused. A UI that ran it itself, with the user's rights,
// would leave the canary.
func TestStatusLineRunsConfinedInTmux(t *testing.T) {
	clitest.NeedTmux(t)
	t.Parallel()
	bin := clitest.BuildBinary(t)
	h := clitest.New(t, func(*fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("hi") })
	canary := filepath.Join(filepath.Dir(h.Dir), "statusline-canary")
	for path, body := range map[string]string{
		filepath.Join(h.Dir, "scripts", "status.sh"):     "#!/bin/sh\necho STATUS-FROM-SCRIPT\necho x > '" + canary + "' 2>/dev/null\nexit 0\n",
		filepath.Join(h.Dir, ".claude", "settings.json"): `{"statusLine": {"type": "command", "command": "./scripts/status.sh"}}`,
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env := append(h.Environ(), "TERM=xterm-256color")
	p := startPane(t, h.Dir, env, bin, "--cwd", h.Dir, "--sandbox", "on")
	p.waitText("default mode", "STATUS-FROM-SCRIPT")
	if _, err := os.Stat(canary); err == nil {
		t.Error("the statusLine ran unconfined: it wrote the canary outside the project")
	}
	p.keys(false, "C-c")
	p.waitFor("the session to end", func(string) bool {
		dead, _, _ := strings.Cut(strings.TrimSpace(p.tmux("display-message", "-p", "-t", "0", "#{pane_dead} #{pane_dead_status}")), " ")
		return dead == "1"
	})
}
