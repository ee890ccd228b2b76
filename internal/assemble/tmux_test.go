package assemble

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/settings"
)

// TestTeammateConfigurationFile: a tmux teammate's configuration — its
// credentials included — goes into a file of mode 0600 under Cohort's
// home, holding what Plan.Team.Configure made of the teammate's place,
// model and environment; what no teammate read is removed with the
// session.
func TestTeammateConfigurationFile(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	env := map[string]string{"ANTHROPIC_API_KEY": "secret-key", "COHORT_FLAG_AGENT_TEAMS": "on", "UNRELATED": "x"}
	var got ChildSpec
	p := &Plan{
		Process: Process{Cwd: "/project", Paths: settings.Env{CohortHome: home},
			Getenv: func(k string) string { return env[k] },
			Environ: func() []string {
				var out []string
				for k, v := range env {
					out = append(out, k+"="+v)
				}
				return out
			}},
		Model: ModelPlan{Spec: "opus"},
		Team: TeamPlan{Configure: func(spec ChildSpec) ([]byte, error) {
			got = spec
			return json.Marshal(map[string]string{"key": spec.Environment["ANTHROPIC_API_KEY"]})
		}},
	}
	s := &Session{Plan: p, id: "lead-session", model: &openedModel{name: "opus"}}
	b := &tmuxBackend{s: s}
	path, err := b.writeConfig(Membership{Team: "t", Name: "bob", LeadSession: s.id})
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 || !strings.HasPrefix(path, filepath.Join(home, "tmux")+string(filepath.Separator)) {
		t.Fatalf("configuration file %s: %v, mode %v; want mode 0600 under %s/tmux", path, err, fi.Mode(), home)
	}
	if data, _ := os.ReadFile(path); !strings.Contains(string(data), "secret-key") {
		t.Errorf("the file holds %s, not what Configure made", data)
	}
	if got.Member.Name != "bob" || got.Model != "opus" || got.Home != home || got.Cwd != "/project" ||
		got.Environment["ANTHROPIC_API_KEY"] != "secret-key" || got.Environment["COHORT_FLAG_AGENT_TEAMS"] != "on" || got.Environment["UNRELATED"] != "" {
		t.Errorf("the teammate's spec: %+v", got)
	}
	b.removeConfigs()
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a configuration no teammate read is still there after the session: %v", err)
	}
}
