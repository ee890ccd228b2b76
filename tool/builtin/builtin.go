// Package builtin assembles Cohort's core tools — the ones every agent
// starts from before the tool pool is filtered — in their canonical order.
package builtin

import (
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/tool/file"
	"github.com/cohort-dev/cohort/tool/search"
	"github.com/cohort-dev/cohort/tool/shell"
	"github.com/cohort-dev/cohort/tool/todo"
	"github.com/cohort-dev/cohort/tool/web"
)

// Config configures the core tools. The zero value gives every tool its
// defaults, and no WebSearch.
type Config struct {
	Shell    shell.Config
	Glob     search.GlobConfig
	Grep     search.GrepConfig
	LS       search.LSConfig
	Read     file.ReadConfig
	Notebook file.NotebookEditConfig
	Web      web.Config
	// Search configures WebSearch, which is included only when
	// Search.Model is set: a model whose provider has server-side web
	// search (the Anthropic API).
	Search web.SearchConfig
	// Todos is the TodoWrite tool to include; nil creates a fresh one. Pass
	// your own to read the agents' lists (the TUI does).
	Todos *todo.TodoWrite
}

// Names are the core tools' names in the order All returns them, WebSearch
// included (All leaves it out without a search model).
var Names = []string{"Bash", "Glob", "Grep", "LS", "Read", "Edit", "MultiEdit", "Write", "NotebookEdit",
	"WebFetch", "WebSearch", "TodoWrite"}

// All returns the core tools in a fixed order: Bash, Glob, Grep, LS, Read,
// Edit, MultiEdit, Write, NotebookEdit, WebFetch, WebSearch (with a search
// model), TodoWrite. The order, like every tool's description and schema,
// is part of the cached prompt prefix: changing it invalidates every
// prompt cache, so change it deliberately.
func All(cfg Config) []tool.Tool {
	todos := cfg.Todos
	if todos == nil {
		todos = todo.New(todo.Config{})
	}
	tools := []tool.Tool{
		shell.NewBash(cfg.Shell),
		search.NewGlob(cfg.Glob),
		search.NewGrep(cfg.Grep),
		search.NewLS(cfg.LS),
		file.NewRead(cfg.Read),
		file.NewEdit(),
		file.NewMultiEdit(),
		file.NewWrite(),
		file.NewNotebookEdit(cfg.Notebook),
		web.New(cfg.Web),
	}
	if cfg.Search.Model != nil {
		tools = append(tools, web.NewSearch(cfg.Search))
	}
	return append(tools, todos)
}
