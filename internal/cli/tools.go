package cli

import (
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/tool/file"
	"github.com/cohort-dev/cohort/tool/search"
	"github.com/cohort-dev/cohort/tool/shell"
)

// tools returns every tool of the session but Agent, in canonical order
// (the order is part of the cached prompt prefix).
func (s *sess) tools() []tool.Tool {
	ts := []tool.Tool{
		shell.NewBash(shell.Config{}),
		search.NewGlob(search.GlobConfig{}),
		search.NewGrep(search.GrepConfig{}),
		file.NewRead(file.ReadConfig{}),
		file.NewEdit(),
		file.NewWrite(),
		file.NewNotebookEdit(file.NotebookEditConfig{}),
	}
	if s.tasks != nil {
		ts = append(ts, task.NewOutputTool(s.tasks, s.leadQueue()), task.NewStopTool(s.tasks))
	}
	return ts
}
