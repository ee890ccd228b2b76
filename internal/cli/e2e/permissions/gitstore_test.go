package permissions

import (
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestGitStoreHiddenOnlyWhenHistoryHoldsADeniedFile: git's object store
// and index hold every committed version of a file, so when history holds
// one a Read deny rule covers, the kernel hides them from the model's
// commands (an interpreter reading .git/objects gets nothing, in
// bypassPermissions too) and the user is told at the start; when the
// denied file was never committed (an ignored .env), git works as always
// and nothing is said.
func TestGitStoreHiddenOnlyWhenHistoryHoldsADeniedFile(t *testing.T) {
	t.Parallel()
	run := func(t *testing.T, files map[string]string, deny string) (results []string, stderr string) {
		var mu sync.Mutex
		c := clitest.NewConv().On("inspect", clitest.Calls(
			clitest.Use("Bash", map[string]any{"command": "git log --format=%s; echo end"}),
			clitest.Use("Bash", map[string]any{"command": `python3 -c 'import glob, zlib
for f in glob.glob(".git/objects/??/*"): print(zlib.decompress(open(f, "rb").read()))' 2>&1 | tail -c 2000; echo end`}),
		), func(r *fakeapi.Request) fakeapi.Reply {
			mu.Lock()
			results = clitest.ToolResults(r)
			mu.Unlock()
			return fakeapi.TextReply("done")
		})
		h := clitest.New(t, c.Policy)
		clitest.GitRepo(t, h, files)
		h.Write(".env", "S3CRET-ENV\n")
		h.Write(".cohort/settings.json", `{"permissions": {"deny": ["`+deny+`"]}}`)
		out, errOut, code := h.Run("-p", "inspect", "--permission-mode", "bypassPermissions")
		if code != 0 {
			t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(results) != 2 {
			t.Fatalf("tool results %q, want two", results)
		}
		return results, errOut
	}
	const notice = "the repository's object store and index are hidden from the model's commands"
	t.Run("committed", func(t *testing.T) {
		t.Parallel()
		got, errOut := run(t, map[string]string{"secrets/key": "S3CRET-KEY\n", ".gitignore": ".env\n"}, "Read(./secrets/**)")
		for i, r := range got {
			if strings.Contains(r, "S3CRET-KEY") || !strings.Contains(r, "end") {
				t.Errorf("call %d read the committed secret from git's store, or did not run: %q", i, r)
			}
		}
		if !strings.Contains(errOut, notice) || !strings.Contains(errOut, "secrets/key") {
			t.Errorf("stderr does not say the store is hidden, naming the file:\n%s", errOut)
		}
	})
	t.Run("never committed", func(t *testing.T) {
		t.Parallel()
		got, errOut := run(t, map[string]string{"app.go": "package app\n", ".gitignore": ".env\n"}, "Read(./.env)")
		if !strings.Contains(got[0], "start\nend") {
			t.Errorf("git log should work when no denied file was committed: %q", got[0])
		}
		if strings.Contains(errOut, notice) {
			t.Errorf("stderr says the store is hidden though no denied file was committed:\n%s", errOut)
		}
	})
}
