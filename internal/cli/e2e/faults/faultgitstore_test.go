//go:build faultinject

package faults

import (
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestFaultInjectedGitStore proves the git store's layering (issue 36):
//
//	go test -tags faultinject -run TestFaultInjectedGitStore ./internal/cli/e2e/faults
//
// The session's search of git's history answers "nothing denied" for
// every repository, so the store is not hidden on its account. A file a
// Read deny rule covers is committed; in bypassPermissions (nothing asks)
// a scripted model reads the store raw with an interpreter, inflates the
// loose objects and packs, and asks git for the blob. The sandbox's own
// look-up of the denied file's contents in the store (package sandbox,
// heldStore) must still hide it: the secret never reaches the model.
func TestFaultInjectedGitStore(t *testing.T) {
	t.Parallel()
	for _, packed := range []bool{false, true} {
		name := "loose"
		if packed {
			name = "packed"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			gitStoreRun(t, packed)
		})
	}
}

const storeSecret = "FAULT-STORE-SECRET-51c9"

// inflate reads every file below .git and prints what holds the secret,
// raw or inflated from any zlib stream in it, and how many files it read.
const inflate = `python3 -c 'import os, zlib
n = 0
for d, _, fs in os.walk(".git"):
    for f in fs:
        try:
            data = open(os.path.join(d, f), "rb").read()
        except Exception:
            continue
        n += 1
        for i in range(len(data)):
            if data[i] == 0x78:
                try:
                    out = zlib.decompressobj().decompress(data[i:i+4096])
                except Exception:
                    continue
                if b"FAULT-STORE" in out:
                    print("inflated", d, f, out[:200])
print("files read:", n)'`

func gitStoreRun(t *testing.T, packed bool) {
	var mu sync.Mutex
	var results []string
	record := func(r *fakeapi.Request) fakeapi.Reply {
		mu.Lock()
		results = append(results, clitest.ToolResults(r)...)
		mu.Unlock()
		return fakeapi.TextReply("tried")
	}
	c := clitest.NewConv()
	h := clitest.New(t, c.Policy)
	inject(h, "gitstore")
	c.On("ATTACK", clitest.Calls(
		clitest.Use("Bash", map[string]any{"command": inflate}),
		clitest.Use("Bash", map[string]any{"command": `git show HEAD:secrets/key 2>&1; git cat-file -p HEAD:secrets/key 2>&1; git log -p 2>&1 | grep -a FAULT; true`}),
		clitest.Use("Bash", map[string]any{"command": `cat secrets/key 2>&1; true`}),
	), record)
	h.Vars["ANTHROPIC_API_KEY"] = "sk-ant-fault-store-2b7d"
	clitest.GitRepo(t, h, map[string]string{
		"README.md":             "hello\n",
		"secrets/key":           storeSecret + "\n",
		".cohort/settings.json": `{"permissions":{"deny":["Read(./secrets/**)"]}}` + "\n",
	})
	if packed {
		h.Git("gc", "-q", "--prune=now")
	}
	stdout, stderr, code := h.RunBinary("-p", "ATTACK", "--permission-mode", "bypassPermissions")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	mu.Lock()
	got := strings.Join(results, "\n")
	mu.Unlock()
	if len(results) != 3 {
		t.Fatalf("want 3 tool results, got %d:\n%s\n%s", len(results), got, stderr)
	}
	if strings.Contains(got, storeSecret) || strings.Contains(stdout, storeSecret) {
		t.Errorf("the denied file's contents reached the model through .git:\n%s", got)
	}
	// The fault is in force: the search reported nothing, so what hid the
	// store is the sandbox's own look-up.
	if strings.Contains(stderr, "which your Read deny rules cover") || strings.Contains(stderr, "no commit, tag or index reaches") {
		t.Errorf("the fault is not in force: the search hid the store:\n%s", stderr)
	}
	if !strings.Contains(results[0], "files read: 0") {
		t.Errorf("the store was readable:\n%s", results[0])
	}
}
