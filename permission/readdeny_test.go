package permission

import (
	"encoding/json"
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
