package binary

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
)

// Bad input: a repository whose .git holds a commondir file (as a command
// of an earlier session might have planted, pointing at a git dir whose
// config runs a program) is reported at start with the file and what to
// do, and Cohort's own git (the session's snapshot) is not redirected by
// it: the program never runs, inside the sandbox or out.
func TestPlantedCommondirReported(t *testing.T) {
	t.Parallel()
	h := clitest.New(t, clitest.NewConv().On("hello", clitest.Text("hi")).Policy)
	clitest.GitRepo(t, h, map[string]string{"README.md": "hello\n"})
	canary := filepath.Join(filepath.Dir(h.Dir), "fsmonitor-ran")
	fake := filepath.Join(filepath.Dir(h.Dir), "fake")
	for _, d := range []string{"objects", "refs"} {
		if err := os.MkdirAll(filepath.Join(fake, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(fake, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	os.WriteFile(filepath.Join(fake, "config"), []byte("[core]\n\trepositoryformatversion = 0\n\tfsmonitor = touch "+canary+"\n"), 0o644)
	os.WriteFile(filepath.Join(h.Dir, ".git", "commondir"), []byte(fake+"\n"), 0o644)
	h.Write("changed.txt", "x\n")
	_, errOut, code := h.Run("-p", "hello")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if !strings.Contains(errOut, filepath.Join(h.Dir, ".git", "commondir")+" exists") || !strings.Contains(errOut, "remove it") {
		t.Errorf("stderr does not report the commondir file and what to do:\n%s", errOut)
	}
	if _, err := os.Stat(canary); err == nil {
		t.Errorf("the planted git dir's fsmonitor ran")
	}
	// The control: git run as the user would, discovering the repository,
	// follows the file and runs it.
	h.GitErr("status")
	if _, err := os.Stat(canary); err != nil {
		t.Errorf("control: plain git status should follow the commondir file and run the fsmonitor")
	}
}
