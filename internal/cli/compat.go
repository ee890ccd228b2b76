package cli

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort"
)

// splitList splits a comma- or space-separated flag value.
func splitList(v string) []string {
	return strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
}

// toolPool is --tools as Config.ToolPool: nil for "default" (every tool),
// an empty list for "" (none).
func (o *options) toolPool() []string {
	if strings.TrimSpace(o.tools) == "default" {
		return nil
	}
	return append([]string{}, splitList(o.tools)...)
}

// sources is --setting-sources as Config.SettingSources (nil: all).
func (o *options) sources() []string {
	if o.settingSources == "" {
		return nil
	}
	return splitList(o.settingSources)
}

var settingSources = []string{"user", "project", "local"}

// validateParity checks the flags Claude Code users pass.
func (o *options) validateParity() error {
	if o.skipPermissions && o.permissionMode != "" && o.permissionMode != "bypassPermissions" {
		return usageErr("--dangerously-skip-permissions is --permission-mode bypassPermissions; it cannot be used with --permission-mode %s", o.permissionMode)
	}
	for _, src := range o.sources() {
		if !slices.Contains(settingSources, src) {
			return usageErr("--setting-sources %q: %q is not one of user, project, local", o.settingSources, src)
		}
	}
	if n := o.maxThinkingTokens; n != 0 && (n < 1024 || n > 31999) {
		return usageErr("--max-thinking-tokens %d: a thinking budget is 1024 to 31999 tokens (0 turns thinking off)", n)
	}
	if o.fallbackModel != "" && o.fallbackModel == o.model {
		return usageErr("--fallback-model %s is the same as --model; name another model to fall back to", o.fallbackModel)
	}
	if _, err := newDebugFilterChecked(o.debug); err != nil {
		return err
	}
	for _, v := range o.mcpConfigs {
		if err := o.checkMCPConfig(v); err != nil {
			return err
		}
	}
	return nil
}

// checkMCPConfig reads one --mcp-config value (JSON text, or the paths of
// JSON files, space-separated, each {"mcpServers": {name: …}}), so that a
// missing file or broken JSON is a usage error before anything starts.
func (o *options) checkMCPConfig(v string) error {
	dir := o.cwd
	if dir == "" {
		dir, _ = os.Getwd()
	}
	if err := cohort.CheckMCPConfig(v, dir); err != nil {
		return usageErr("--mcp-config: %v", err)
	}
	return nil
}

// debugCategories are what --debug can name.
var debugCategories = []string{"api", "tools", "permissions", "tasks", "team", "hooks"}

// debugFilter is --debug's category filter: "all" (the bare flag), a list
// of categories ("api,tools"), or exclusions ("!team,!tasks": all but
// those), as Claude Code's --debug takes them.
type debugFilter struct {
	include, exclude map[string]bool
}

func newDebugFilter(v string) *debugFilter {
	f, _ := newDebugFilterChecked(v)
	return f
}

func newDebugFilterChecked(v string) (*debugFilter, error) {
	if v == "" {
		return nil, nil
	}
	f := &debugFilter{include: map[string]bool{}, exclude: map[string]bool{}}
	if v == "all" {
		return f, nil
	}
	for _, c := range splitList(v) {
		name, not := strings.CutPrefix(c, "!")
		if !slices.Contains(debugCategories, name) {
			return nil, usageErr("--debug %q: %q is not a category; use some of %s (or !name to leave one out)", v, name, strings.Join(debugCategories, ", "))
		}
		if not {
			f.exclude[name] = true
		} else {
			f.include[name] = true
		}
	}
	return f, nil
}

// on reports whether the filter logs category c.
func (f *debugFilter) on(c string) bool {
	if f == nil || f.exclude[c] {
		return false
	}
	return len(f.include) == 0 || f.include[c]
}

// versionLine is what --version prints, as Claude Code prints
// "X (Claude Code)".
func versionLine(v string) string { return fmt.Sprintf("%s (Cohort)", v) }
