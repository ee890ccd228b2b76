package worktree

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestCwdChangedHook: EnterWorktree and ExitWorktree move the lead, and
// each move fires CwdChanged once, after it, with old_cwd, new_cwd and cwd
// the new directory.
func TestCwdChangedHook(t *testing.T) {
	t.Parallel()
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		steps := [][]fakeapi.Block{
			{clitest.Use("EnterWorktree", map[string]any{"name": "moved"})},
			{clitest.Use("ExitWorktree", map[string]any{"action": "keep"})},
		}
		if r.Turn() < len(steps) {
			return fakeapi.Reply{Content: steps[r.Turn()]}
		}
		return fakeapi.TextReply("done")
	}
	h := clitest.New(t, policy)
	clitest.GitRepo(t, h, map[string]string{"a.txt": "a\n"})
	log := filepath.Join(t.TempDir(), "cwd.jsonl")
	script := filepath.Join(t.TempDir(), "cwd.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n(cat; echo) >> "+log+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The hook runs in the sandbox: its log's folder is one it may write.
	h.Write(".cohort/settings.json", `{"sandbox": {"allowWrite": ["`+filepath.Dir(log)+`"]}, "hooks": {"CwdChanged": [{"hooks": [{"type": "command", "command": "sh `+script+`"}]}]}}`)
	out, errOut, code := h.Run("-p", "LEAD-move: work apart", "--permission-mode", "bypassPermissions")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	f, err := os.Open(log)
	if err != nil {
		t.Fatalf("the CwdChanged hook never ran: %v\n%s", err, errOut)
	}
	defer f.Close()
	var got []map[string]any
	for sc := bufio.NewScanner(f); sc.Scan(); {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		got = append(got, m)
	}
	wt := filepath.Join(h.Dir, ".cohort", "worktrees", "moved")
	want := [][2]string{{h.Dir, wt}, {wt, h.Dir}}
	if len(got) != len(want) {
		t.Fatalf("CwdChanged fired %d times, want %d: %v", len(got), len(want), got)
	}
	for i, w := range want {
		in := got[i]
		if in["hook_event_name"] != "CwdChanged" || in["old_cwd"] != w[0] || in["new_cwd"] != w[1] || in["cwd"] != w[1] {
			t.Errorf("move %d: input %v, want %s → %s", i, in, w[0], w[1])
		}
	}
}
