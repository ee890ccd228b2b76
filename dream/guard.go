package dream

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/cohort-dev/cohort/permission"
)

// readOnlyCommands names the commands the prompt suggests; any line
// permission.IsReadOnlyCommand accepts runs.
const readOnlyCommands = "ls, find, grep, cat, stat, wc, head, tail"

// guard confines the dream agent: Write and Edit only inside the memory
// directory (tool.WriteGuard), Bash only read-only command lines
// (shell.CommandGuard). It holds whatever the session's permission mode
// says, bypassPermissions included. It reports every write it lets
// through. Safe for concurrent use.
type guard struct {
	dir     string // resolved
	onWrite func(path string)
}

// CheckWrite refuses paths outside the memory directory.
func (g *guard) CheckWrite(path string) error {
	res := path
	if r, err := resolve(path); err == nil {
		res = r
	}
	if res != g.dir && !strings.HasPrefix(res, g.dir+string(filepath.Separator)) {
		return fmt.Errorf("the memory consolidation may write only inside the memory directory %s; %s is outside it. Leave other files alone", g.dir, path)
	}
	if g.onWrite != nil {
		g.onWrite(res)
	}
	return nil
}

// CheckCommand refuses command lines that are not read-only.
func (g *guard) CheckCommand(command, _ string) error {
	if permission.IsReadOnlyCommand(command) {
		return nil
	}
	return fmt.Errorf("the memory consolidation runs only read-only shell commands (%s, …); %q is not one. Use Write or Edit inside %s to change memory files", readOnlyCommands, command, g.dir)
}

// resolve resolves the links of path's longest existing prefix, the rest
// appended (a file about to be created).
func resolve(path string) (string, error) {
	path = filepath.Clean(path)
	rest := ""
	for cur := path; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest), nil
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return path, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// prompter answers the dream agent's "ask" decisions with nobody to ask:
// reads run anywhere (the dream agent has Read, Grep and Glob everywhere);
// everything else is refused with a reason the model reads.
type prompter struct{ dir string }

func (p prompter) Prompt(_ context.Context, req permission.PromptRequest) (permission.PromptDecision, error) {
	switch req.ToolName {
	case "Read", "Grep", "Glob":
		return permission.PromptDecision{Allow: true}, nil
	case "Write", "Edit":
		return permission.PromptDecision{Message: fmt.Sprintf("Refused: the memory consolidation may write only inside the memory directory %s (%s).", p.dir, strings.TrimSpace(req.Reason))}, nil
	case "Bash":
		var in struct {
			Command string `json:"command"`
		}
		_ = json.Unmarshal(req.Input, &in)
		return permission.PromptDecision{Message: fmt.Sprintf("Refused: the memory consolidation runs only read-only shell commands (%s, …) on paths it may read; %q is not allowed. Change memory files with Write or Edit inside %s.", readOnlyCommands, in.Command, p.dir)}, nil
	}
	return permission.PromptDecision{Message: "Refused: the memory consolidation has no use for " + req.ToolName + "."}, nil
}

// writes collects the files the agent wrote, in order, once each.
type writes struct {
	mu    sync.Mutex
	seen  map[string]bool
	order []string
	first func()
}

func (w *writes) add(path string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen == nil {
		w.seen = map[string]bool{}
	}
	if w.seen[path] {
		return
	}
	w.seen[path] = true
	w.order = append(w.order, path)
	if len(w.order) == 1 && w.first != nil {
		w.first()
	}
}

// onFirst sets what happens at the first write.
func (w *writes) onFirst(f func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.first = f
}

func (w *writes) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.order...)
}
