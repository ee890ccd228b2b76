package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestSandboxClaudeCodeBlock: a sandbox block as Claude Code's settings
// write it (network as an object, keys Cohort does not have) keeps what
// Cohort applies — enabled, excludedCommands, network.allowUnixSockets —
// and names each key it does not apply, instead of dropping the whole
// block (which lost excludedCommands).
func TestSandboxClaudeCodeBlock(t *testing.T) {
	t.Parallel()
	var h *harness
	c := newConv().on("excluded", func(*fakeapi.Request) fakeapi.Reply {
		out := filepath.Dir(h.dir)
		return fakeapi.Reply{Content: []fakeapi.Block{
			use("Bash", map[string]any{"command": "touch " + filepath.Join(out, "cc-excluded")}),
			use("Bash", map[string]any{"command": "touch " + filepath.Join(out, "cc-confined")}),
		}}
	}, text("done"))
	h = newHarness(t, c.policy)
	h.write(".claude/settings.json", `{
  "sandbox": {
    "enabled": true,
    "autoAllowBashIfSandboxed": true,
    "excludedCommands": ["touch `+filepath.Join(filepath.Dir(h.dir), "cc-excluded")+`"],
    "network": {"allowUnixSockets": ["/run/no-such.sock"], "allowedDomains": ["github.com"]},
    "colour": "blue"
  }
}
`)
	out, errOut, code := h.run("-p", "excluded", "--permission-mode", "bypassPermissions")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(h.dir), "cc-excluded")); err != nil {
		t.Errorf("excludedCommands of a Claude Code block was not applied: %v\n%s", err, errOut)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(h.dir), "cc-confined")); err == nil {
		t.Errorf("the sandbox was off with a Claude Code block")
	}
	settings := filepath.Join(h.dir, ".claude", "settings.json") + ":2"
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
