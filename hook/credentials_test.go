package hook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/tool"
)

// A hook's children must not inherit the credentials Cohort holds; a hook
// that needs one gets it through ExtraEnv (settings "env").
func TestHookEnvHasNoCredentials(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "env.txt")
	path := script(t, dir, "hook.sh", "cat >/dev/null; env > "+out)
	base := []string{"PATH=" + os.Getenv("PATH"), "ANTHROPIC_API_KEY=sk-ant-secret", "ANTHROPIC_AUTH_TOKEN=tok-secret",
		"OPENAI_API_KEY=sk-openai-secret", "NATS_CREDS=/home/u/nats.creds", "NATS_TOKEN=nats-secret", "KEEP=me"}
	r := newRunner(t, Config{Env: base, ExtraEnv: []string{"OPENAI_API_KEY=from-settings"}},
		spec{event: PreToolUse, matcher: "Write", cmd: path})
	r.For(Subject{Caller: tool.Caller{Cwd: dir}}).PreToolUse(t.Context(), call(dir, "Write", `{"file_path": "/x", "content": "y"}`))
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	env := string(data)
	for _, secret := range []string{"sk-ant-secret", "tok-secret", "sk-openai-secret", "nats.creds", "nats-secret"} {
		if strings.Contains(env, secret) {
			t.Errorf("the hook's environment holds %q:\n%s", secret, env)
		}
	}
	if !strings.Contains(env, "KEEP=me") || !strings.Contains(env, "OPENAI_API_KEY=from-settings") {
		t.Errorf("the hook's environment lost KEEP or the settings value:\n%s", env)
	}
}
