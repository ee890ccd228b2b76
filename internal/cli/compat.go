package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort"
)

// splitList splits a comma- or space-separated flag value.
func splitList(v string) []string {
	return strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
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

// versionLine is what --version prints, shaped as Claude Code's
// "X (Claude Code)", with the Claude Code release whose command line and
// protocol Cohort speaks: "0.4.0 (Cohort; speaks Claude Code 2.1.332)".
func versionLine(v string) string {
	return fmt.Sprintf("%s (Cohort; speaks Claude Code %s)", v, cohort.ProtocolVersion)
}
