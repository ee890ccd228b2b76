package permission

import (
	"encoding/json"
	"slices"
	"testing"
)

// TestReadDenyCoversEveryFileTool is issue 36's invariant 5 for the
// permission check: every file tool shows what it opens (Edit a snippet,
// Write and NotebookEdit the original file, the Workflow tool a script's
// load error), so a Read deny rule stops all of them, in every mode, and
// the paths a tool outside the table reports (Pather) too.
func TestReadDenyCoversEveryFileTool(t *testing.T) {
	f := newFixture(t)
	f.perms(nil, []string{"Read(./secrets/**)"}, nil)
	key := f.path("proj/secrets/key")
	nb, _ := json.Marshal(map[string]any{"notebook_path": f.path("proj/secrets/n.ipynb"), "new_source": "x"})
	multi, _ := json.Marshal(map[string]any{"file_path": key, "edits": []map[string]string{{"old_string": "k", "new_string": "x"}}})
	reqs := []Request{
		edit(key),
		{Tool: "Write", Input: input("file_path", key, "content", "x")},
		{Tool: "MultiEdit", Input: multi},
		{Tool: "NotebookEdit", Input: nb},
		{Tool: "Workflow", Input: input("scriptPath", "secrets/key"), Paths: []string{"secrets/key"}},
		{Tool: "mcp__files__read", Input: input("path", key), Paths: []string{key}, ReadOnly: true},
	}
	for _, mode := range []Mode{ModeDefault, ModeAcceptEdits, ModeDontAsk, ModeBypassPermissions} {
		c := f.checker(mode)
		for _, req := range reqs {
			if d := f.decide(c, req); d.Behavior != Deny {
				t.Errorf("%s mode: %s of a denied file: %s (%s), want deny", mode, req.Tool, d.Behavior, d.Reason)
			}
		}
		if !c.DeniedRead("", key) || c.DeniedRead("", f.path("proj/src/main.go")) {
			t.Errorf("DeniedRead does not tell the secret from the source")
		}
	}
}

// TestReadDenyCoversWorktreeCopies: an agent's worktree holds a copy of
// the project (.cohort/worktrees/<name>/), so a project's deny rule
// covers the copy there for the lead too — by Read, by a command, by the
// listings and by the sandbox's hiding (ReadDenials) — where before the
// lead read secrets/key of any isolated agent's worktree in default mode.
func TestReadDenyCoversWorktreeCopies(t *testing.T) {
	f := newFixture(t)
	f.perms(nil, []string{"Read(./secrets/**)"}, nil)
	f.write("proj/.cohort/worktrees/agent-1/secrets/key", "copy")
	f.write("proj/.cohort/worktrees/agent-1/src/main.go", "package main")
	copyKey := f.path("proj/.cohort/worktrees/agent-1/secrets/key")
	for _, mode := range []Mode{ModeDefault, ModeAcceptEdits, ModeDontAsk, ModeBypassPermissions} {
		c := f.checker(mode)
		for _, req := range []Request{
			{Tool: "Read", Input: input("file_path", copyKey)},
			{Tool: "Bash", Input: input("command", "cat .cohort/worktrees/agent-1/secrets/key")},
			{Tool: "Grep", Input: input("pattern", "x", "path", f.path("proj/.cohort/worktrees/agent-1/secrets"))},
		} {
			if d := f.decide(c, req); d.Behavior != Deny {
				t.Errorf("%s mode: %s of a worktree's copy of the secret: %s (%s), want deny", mode, req.Tool, d.Behavior, d.Reason)
			}
		}
		if !c.DeniedRead("", copyKey) || c.DeniedRead("", f.path("proj/.cohort/worktrees/agent-1/src/main.go")) {
			t.Errorf("%s mode: DeniedRead does not tell the worktree's copy of the secret from its source", mode)
		}
	}
	got := f.checker(ModeDefault).ReadDenials(t.Context(), "", DefaultDenialLimits).Paths
	if !slices.Contains(got, f.path("proj/.cohort/worktrees/agent-1/secrets")) {
		t.Errorf("ReadDenials = %q, want the worktree's copy of secrets too", got)
	}
}
