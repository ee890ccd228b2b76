package permissions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestSandboxClaudeCodeBlock: a sandbox block as Claude Code's settings
// write it (network as an object, keys Cohort does not have) keeps what
// Cohort applies — enabled, excludedCommands, network.allowUnixSockets —
// and names each key it does not apply, instead of dropping the whole
// block (which lost excludedCommands).
func TestSandboxClaudeCodeBlock(t *testing.T) {
	t.Parallel()
	var h *clitest.Harness
	c := clitest.NewConv().On("excluded", func(*fakeapi.Request) fakeapi.Reply {
		out := filepath.Dir(h.Dir)
		return fakeapi.Reply{Content: []fakeapi.Block{
			clitest.Use("Bash", map[string]any{"command": "touch " + filepath.Join(out, "cc-excluded")}),
			clitest.Use("Bash", map[string]any{"command": "touch " + filepath.Join(out, "cc-confined")}),
		}}
	}, clitest.Text("done"))
	h = clitest.New(t, c.Policy)
	h.Write(".claude/settings.json", `{
  "sandbox": {
    "enabled": true,
    "autoAllowBashIfSandboxed": true,
    "excludedCommands": ["touch `+filepath.Join(filepath.Dir(h.Dir), "cc-excluded")+`"],
    "network": {"allowUnixSockets": ["/run/no-such.sock"], "allowedDomains": ["github.com"]},
    "colour": "blue"
  }
}
`)
	out, errOut, code := h.Run("-p", "excluded", "--permission-mode", "bypassPermissions")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(h.Dir), "cc-excluded")); err != nil {
		t.Errorf("excludedCommands of a Claude Code block was not applied: %v\n%s", err, errOut)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(h.Dir), "cc-confined")); err == nil {
		t.Errorf("the sandbox was off with a Claude Code block")
	}
	settings := filepath.Join(h.Dir, ".claude", "settings.json") + ":2"
	for _, want := range []string{
		settings + ": sandbox.autoAllowBashIfSandboxed is Claude Code's and Cohort does not apply it",
		settings + ": sandbox.network.allowedDomains is not applied",
		settings + ": sandbox.colour is not a sandbox key",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	for _, unwanted := range []string{"sandbox.network.allowUnixSockets", "sandbox.excludedCommands", "not a valid sandbox block"} {
		if strings.Contains(errOut, unwanted) {
			t.Errorf("stderr reports %q, which is applied:\n%s", unwanted, errOut)
		}
	}
}
