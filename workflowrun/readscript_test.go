package workflowrun

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A scriptPath the model planted as a FIFO fails at once instead of
// blocking the call; one that is a link to Cohort's environment, or to a
// file a deny rule covers (judged on the file opened, whatever the name
// said when it was checked), is refused and none of it is returned.
func TestReadScriptRefusesPlantedFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "flow.js")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	env := filepath.Join(dir, "env.js")
	if err := os.Symlink("/proc/self/environ", env); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "secret.js")
	if err := os.WriteFile(secret, []byte("export const KEY = 's3cret'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "ok.js")
	if err := os.Symlink(secret, link); err != nil {
		t.Fatal(err)
	}
	denied := func(p string) bool { return p == secret }
	for _, p := range []string{fifo, env, link} {
		l, err := readScript(Launch{}, p, denied)
		if err == nil || l.Source != "" || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("readScript(%s) = %q, %v; want it refused with nothing read", filepath.Base(p), l.Source, err)
		}
	}
	if l, err := readScript(Launch{}, secret, nil); err != nil || !strings.Contains(l.Source, "s3cret") {
		t.Errorf("readScript with no deny rule = %q, %v", l.Source, err)
	}
}
