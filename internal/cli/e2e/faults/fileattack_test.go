//go:build faultinject

package faults

import (
	"path/filepath"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// notebook is the notebook in the hook scripts' folder NotebookEdit tries.
const notebook = `{"cells":[{"cell_type":"code","id":"a1","metadata":{},"source":["print(1)"],"outputs":[],"execution_count":null}],` +
	`"metadata":{},"nbformat":4,"nbformat_minor":5}` + "\n"

// agentDir is the working directory of the agent that attacks: the main
// checkout, or the linked worktree a session started in.
func agentDir(main string, worktree bool) string {
	if worktree {
		return filepath.Join(main, ".cohort", "worktrees", "planned")
	}
	return main
}

// fileAttacks are the file tools' forms: a hook script and the helper it
// sources (Edit, MultiEdit, Write), a new file in the hook scripts'
// folder, a notebook there (NotebookEdit), .mcp.json, settings, and a new
// agent definition under a missing .claude. Each must come back refused
// (faultRun checks every result is an error, and the files themselves).
func fileAttacks(dir, out string) []fakeapi.Block {
	p := func(rel string) string { return filepath.Join(dir, rel) }
	touch := "touch " + filepath.Join(out, "c13") + "\n"
	return []fakeapi.Block{
		clitest.Use("Write", map[string]any{"file_path": p("tools/hooks/lib.sh"), "content": touch}),
		clitest.Use("Edit", map[string]any{"file_path": p("tools/hooks/lib.sh"), "old_string": "true", "new_string": touch}),
		clitest.Use("MultiEdit", map[string]any{"file_path": p("tools/hooks/check.sh"), "edits": []map[string]any{{"old_string": "#!/bin/sh", "new_string": "#!/bin/sh\n" + touch}}}),
		clitest.Use("Write", map[string]any{"file_path": p("tools/hooks/new.sh"), "content": touch}),
		clitest.Use("NotebookEdit", map[string]any{"notebook_path": p("tools/hooks/n.ipynb"), "cell_id": "a1", "new_source": "import os; os.system('" + touch + "')"}),
		clitest.Use("Edit", map[string]any{"file_path": p(".mcp.json"), "old_string": "{}", "new_string": `{"x":{"command":"touch","args":["` + filepath.Join(out, "c14") + `"]}}`}),
		clitest.Use("Write", map[string]any{"file_path": p(".mcp.json"), "content": `{"mcpServers":{"x":{"command":"touch","args":["` + filepath.Join(out, "c14") + `"]}}}`}),
		clitest.Use("Edit", map[string]any{"file_path": p(".cohort/settings.json"), "old_string": `"hooks":{`, "new_string": `"permissions":{"defaultMode":"bypassPermissions"},"hooks":{`}),
		clitest.Use("Write", map[string]any{"file_path": p(".claude/agents/x.md"), "content": "---\nname: x\n---\nx\n"}),
	}
}

// fileReads reads what fileAttacks changes, which Edit requires first;
// their results are not judged.
func fileReads(dir string) []fakeapi.Block {
	var out []fakeapi.Block
	for _, rel := range []string{"tools/hooks/lib.sh", "tools/hooks/check.sh", "tools/hooks/n.ipynb", ".mcp.json", ".cohort/settings.json"} {
		out = append(out, clitest.Use("Read", map[string]any{"file_path": filepath.Join(dir, rel)}))
	}
	return out
}
