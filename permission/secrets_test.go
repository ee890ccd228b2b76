package permission

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/cohort-dev/cohort/settings"
)

// TestSecretsAreDeniedWhateverTheRules: Cohort's private directories are
// refused to every tool that asks DeniedRead, with no deny rule in force
// and with a rule allowing every Read, by their name and through a link.
func TestSecretsAreDeniedWhateverTheRules(t *testing.T) {
	root := t.TempDir()
	secret := filepath.Join(root, "home", ".cohort", "tmux")
	project := filepath.Join(root, "project")
	for _, d := range []string{secret, project} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(secret, filepath.Join(project, "link")); err != nil {
		t.Fatal(err)
	}
	for _, allow := range [][]string{nil, {"Read"}, {"Read(//**)"}} {
		c, err := New(Config{Env: settings.Env{Home: filepath.Join(root, "home"), Cwd: project}, Allow: allow})
		if err != nil {
			t.Fatal(err)
		}
		if c.DeniedRead(project, filepath.Join(secret, "cfg.json")) {
			t.Fatalf("allow %q: denied before HideSecrets", allow)
		}
		c.HideSecrets(secret)
		for _, p := range []string{filepath.Join(secret, "cfg.json"), secret, "link/cfg.json", filepath.Join(secret, "..", "tmux", "x")} {
			if !c.DeniedRead(project, p) {
				t.Errorf("allow %q: %s is readable", allow, p)
			}
		}
		if c.DeniedRead(project, filepath.Join(project, "main.go")) {
			t.Errorf("allow %q: the project is denied too", allow)
		}
	}
}
