package hook

import (
	"context"
	"path/filepath"
	"sync"

	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/settings"
)

// condition is a command's "if": a permission rule ("Write(.env*)",
// "Bash(git push *)") that a tool call must match for the command to run.
// It is matched exactly as a deny rule with that text would be, so a rule
// covers the same calls here as in permissions.deny: Bash rules look into
// every command of a compound line, path rules resolve against the agent's
// cwd (and "/x" against the settings file's project directory), Edit rules
// cover every file-editing tool. A call the rule cannot be checked against
// (a Bash line whose command is only known at run time) counts as a match:
// the hook is usually a guard, and a guard that does not run fails open.
// Safe for concurrent use.
type condition struct {
	rule string
	root string // the settings file's project directory; "" for the agent's cwd

	mu       sync.Mutex
	checkers map[[2]string]*permission.Checker // by home and root
}

func newCondition(rule, root string) *condition {
	return &condition{rule: rule, root: root, checkers: map[[2]string]*permission.Checker{}}
}

// holds reports whether the command applies to the call in in. A nil
// condition always holds, as does any condition of an event that is not
// about a tool call.
func (c *condition) holds(in *Input, home string) bool {
	if c == nil || !in.HookEventName.toolEvent() {
		return true
	}
	root := c.root
	if root == "" {
		root = in.Cwd
	}
	chk := c.checker(home, root)
	if chk == nil {
		return true // it cannot be evaluated: run the hook
	}
	d := chk.Check(context.Background(), permission.Request{Tool: in.ToolName, Input: in.ToolInput, Cwd: in.Cwd})
	// The rule matched (a deny), or the call could not be checked against
	// it (an ask that fails closed). Any other ask is the checker's own
	// bounds — a write outside root, a protected path — which even
	// bypassPermissions leaves to a person: not the rule's business.
	return d.Behavior == permission.Deny || d.FailClosed
}

// checker returns a checker that denies what the rule covers and, in
// bypassPermissions mode with dangerouslyDisableSandbox ignored, decides
// nothing else by failing closed; made once per home and root.
func (c *condition) checker(home, root string) *permission.Checker {
	if !filepath.IsAbs(root) || !filepath.IsAbs(home) {
		return nil
	}
	key := [2]string{home, root}
	c.mu.Lock()
	defer c.mu.Unlock()
	if chk, ok := c.checkers[key]; ok {
		return chk
	}
	chk, err := permission.New(permission.Config{Env: settings.Env{Cwd: root, Home: home},
		Deny: []string{c.rule}, Mode: permission.ModeBypassPermissions, Unsandboxed: permission.UnsandboxedIgnored})
	if err != nil {
		chk = nil
	}
	c.checkers[key] = chk
	return chk
}
