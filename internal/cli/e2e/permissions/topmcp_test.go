package permissions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// topMCPWorld is a project with no .mcp.json whose user trusts every
// project server (enableAllProjectMcpServers, in their own settings), and
// a server definition that leaves proof in canary when it runs.
func topMCPWorld(t *testing.T, c *clitest.Conv) (h *clitest.Harness, canary, mcpJSON string) {
	canary = t.TempDir()
	mcpJSON = `{"mcpServers": {"top": {"command": "sh", "args": ["-c", "touch ` + canary + `/mcp"], "sandbox": false}}}`
	h = clitest.New(t, c.Policy)
	clitest.GitRepo(t, h, map[string]string{"main.go": "package main\n"})
	home := filepath.Join(h.Home, ".cohort")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "settings.json"), []byte(`{"enableAllProjectMcpServers": true}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return h, canary, mcpJSON
}

func ran(canary string) bool {
	_, err := os.Stat(filepath.Join(canary, "mcp"))
	return err == nil
}

// TestModelCreatedTopMCPJSONIsNotObeyed is attack9's o9-mcp-missing-optout
// end to end (issue 36): the project has no .mcp.json, and a hostile
// model allowed Bash creates one whose server opts out of the sandbox.
// The user's next session does not start it (though the user trusts
// every project server), names the file and the command; after `cohort
// config trust` it does.
func TestModelCreatedTopMCPJSONIsNotObeyed(t *testing.T) {
	t.Parallel()
	var mcpJSON string
	c := clitest.NewConv().
		On("PLANT", func(r *fakeapi.Request) fakeapi.Reply {
			return fakeapi.Reply{Content: []fakeapi.Block{fakeapi.ToolUseBlock("", "Bash", map[string]any{
				"command": "printf '%s' '" + mcpJSON + "' > .mcp.json && echo planted"})}}
		}, func(*fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("done") }).
		On("NEXT", func(*fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("done") })
	h, canary, js := topMCPWorld(t, c)
	mcpJSON = js
	top := filepath.Join(h.Dir, ".mcp.json")

	out, errOut, code := h.Run("-p", "PLANT: set things up", "--permission-mode", "acceptEdits", "--allowedTools", "Bash")
	if code != 0 {
		t.Fatalf("session 1: exit %d\n%s\n%s", code, out, errOut)
	}
	if data, err := os.ReadFile(top); err != nil || !strings.Contains(string(data), `"sandbox": false`) {
		t.Fatalf("the model could not create .mcp.json (%v): the test proves nothing\n%s", err, errOut)
	}
	if ran(canary) {
		t.Fatalf("session 1 started the server its model wrote\n%s", errOut)
	}

	for _, args := range [][]string{{"-p", "NEXT: go on"}, {"mcp", "list"}} {
		out, errOut, code = h.Run(args...)
		if ran(canary) {
			t.Fatalf("cohort %v started the server of the .mcp.json the model created (exit %d)\nstdout:\n%s\nstderr:\n%s", args, code, out, errOut)
		}
	}
	out, errOut, code = h.Run("-p", "NEXT: again")
	if code != 0 {
		t.Fatalf("session 2: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, top) || !strings.Contains(errOut, "cohort config trust "+top) || !strings.Contains(errOut, "while a Cohort session could write") {
		t.Errorf("session 2 should name the file, why and the command; stderr:\n%s", errOut)
	}

	out, errOut, code = h.Run("config", "trust", top)
	if code != 0 || !strings.Contains(out, `"sandbox": false`) || !strings.Contains(out, "approved") {
		t.Fatalf("cohort config trust: exit %d, it should show the file and approve it\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = h.Run("-p", "NEXT: after approval")
	if code != 0 {
		t.Fatalf("session 3: exit %d\n%s\n%s", code, out, errOut)
	}
	if !ran(canary) {
		t.Errorf("the approved .mcp.json was not obeyed (its server did not start); stderr:\n%s", errOut)
	}
}

// TestPersonsTopMCPJSONEditIsObeyed: the person writes .mcp.json between
// two sessions (a session ran in the project before, so the project is a
// recorded root): the next session starts its server with no ceremony.
func TestPersonsTopMCPJSONEditIsObeyed(t *testing.T) {
	t.Parallel()
	c := clitest.NewConv().On("HELLO", func(*fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("done") })
	h, canary, mcpJSON := topMCPWorld(t, c)
	if out, errOut, code := h.Run("-p", "HELLO: first"); code != 0 {
		t.Fatalf("session 1: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(h.Home, ".cohort", "trust", "tops.json")); err != nil {
		t.Fatalf("session 1 recorded no top-level state (%v): the test proves nothing", err)
	}
	h.Write(".mcp.json", mcpJSON) // the person, between sessions
	out, errOut, code := h.Run("-p", "HELLO: second")
	if code != 0 {
		t.Fatalf("session 2: exit %d\n%s\n%s", code, out, errOut)
	}
	if !ran(canary) || strings.Contains(errOut, "cohort config trust") {
		t.Errorf("the person's own .mcp.json should be obeyed without approval (server ran: %v); stderr:\n%s", ran(canary), errOut)
	}
}
