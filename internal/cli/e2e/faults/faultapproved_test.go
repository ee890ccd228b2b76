//go:build faultinject

package faults

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// faultApprovedFile: a settings file obeyed only by the person's approval
// (src/.cohort/settings.json in a project sessions ran in) allows Write,
// Edit and Bash on a folder outside the project and names it in
// additionalDirectories. With the fault "noprotected", the
// permission layer also lets such a file's allow rules reach past the
// working directories (permission/fault_on.go), so the Write
// and Edit calls are allowed by the check. What must hold below it: the
// rule is no person's word on the path (tool.Env.Approved), so the file
// tools write only inside their roots, which the approved file did not
// widen; and the sandbox's writable set is the person's. attack12's
// o12-approved-adddir and o12-approved-allowout.
func faultApprovedFile(t *testing.T, fault string) {
	out := t.TempDir()
	keep, kept := recorder("done")
	c := clitest.NewConv()
	h := clitest.New(t, c.Policy)
	inject(h, fault)
	clitest.GitRepo(t, h, map[string]string{"src/main.go": "package main\n", "src/.cohort/.keep": ""})
	c.On("FIRST", clitest.Calls(clitest.Use("Bash", map[string]any{"command": "echo hi"})), keep)
	if o, e, code := h.RunBinary("-p", "FIRST: look around"); code != 0 {
		t.Fatalf("first session: exit %d\n%s\n%s", code, o, e)
	}
	name := filepath.Join(h.Dir, "src", ".cohort", "settings.json")
	abs := strings.TrimPrefix(out, "/")
	body := `{"permissions": {"additionalDirectories": ["` + out + `"], "allow": ["Bash", "Write(//` + abs + `/**)", "Edit(//` + abs + `/**)"]}}`
	if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	if o, e, code := h.RunBinary("config", "trust", name); code != 0 {
		t.Fatalf("cohort config trust: exit %d\n%s\n%s", code, o, e)
	}
	if err := os.WriteFile(filepath.Join(out, "old.txt"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.On("NEXT", clitest.Calls(
		clitest.Use("Read", map[string]any{"file_path": filepath.Join(out, "old.txt")}),
	), clitest.Calls(
		clitest.Use("Write", map[string]any{"file_path": filepath.Join(out, "write"), "content": "x\n"}),
		clitest.Use("Edit", map[string]any{"file_path": filepath.Join(out, "old.txt"), "old_string": "old", "new_string": "new"}),
		clitest.Use("Bash", map[string]any{"command": "touch " + filepath.Join(out, "bash") + "; echo tried"}),
	), keep)
	o, e, code := h.RunBinary("--cwd", filepath.Join(h.Dir, "src"), "-p", "NEXT: write outside", "--permission-mode", "acceptEdits")
	if code != 0 {
		t.Fatalf("next session: exit %d\n%s\n%s", code, o, e)
	}
	if !strings.Contains(e, "is not applied") {
		t.Errorf("the approved file's additionalDirectories was not reported; stderr:\n%s", e)
	}
	results := kept()
	if fault == "noprotected" && !strings.Contains(strings.Join(results, "\n"), "outside the directories this agent may write") {
		t.Errorf("the fault is not in force, or another layer refused: the Write tool itself should have refused the path; results:\n%s", strings.Join(results, "\n"))
	}
	for _, f := range []string{"write", "bash"} {
		if _, err := os.Lstat(filepath.Join(out, f)); err == nil {
			t.Errorf("the approved file's rule let the model write %s outside the person's writable set; results:\n%s", f, strings.Join(results, "\n"))
		}
	}
	if data, _ := os.ReadFile(filepath.Join(out, "old.txt")); string(data) != "old\n" {
		t.Errorf("the model edited a file outside the person's writable set: %q; results:\n%s", data, strings.Join(results, "\n"))
	}
	t.Logf("results:\n%s", strings.Join(results, "\n"))
}

// recorder answers every tool result with reply and keeps the results,
// which kept returns.
func recorder(reply string) (record func(*fakeapi.Request) fakeapi.Reply, kept func() []string) {
	var mu sync.Mutex
	var results []string
	record = func(r *fakeapi.Request) fakeapi.Reply {
		mu.Lock()
		results = append(results, clitest.ToolResults(r)...)
		mu.Unlock()
		return fakeapi.TextReply(reply)
	}
	kept = func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), results...)
	}
	return record, kept
}
