package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWorkflowList(t *testing.T) {
	project, home := t.TempDir(), t.TempDir()
	for path, body := range map[string]string{
		filepath.Join(project, ".claude", "workflows", "review.js"): "export const meta = {name: 'review', description: 'review then verify'}\n",
		filepath.Join(home, ".cohort", "workflows", "bad.js"):       "export const meta = {name: nope, description: 'd'}\n",
	} {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var stdout, stderr bytes.Buffer
	env := map[string]string{"HOME": home}
	code := Main(t.Context(), Invocation{Args: []string{"workflow", "list"}, Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr,
		Getenv: func(k string) string { return env[k] }, Environ: func() []string { return nil },
		Getwd: func() (string, error) { return project, nil }})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"review", "review then verify", "bad", "cannot load", "bad.js"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
