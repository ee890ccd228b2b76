//go:build linux

package sandbox

import (
	"path/filepath"
	"slices"
	"strings"
)

// WriteRefusal says why the writing policy of cwd's commands keeps path
// (absolute, its links resolved) from being written, or "" when it does
// not: path is inside a protected path (ReadOnly), or it would create a
// settings directory or .git (or, at a root frozen whole, any entry) at
// the top of a frozen root. It is the sandbox's own computation, not the permission
// layer's list, so the in-process file tools can check their writes
// against it as a second, independent layer (issue 36, invariant 3). An
// unconfined sandbox refuses nothing. Safe for concurrent use.
func (s *Sandbox) WriteRefusal(cwd, path string) string {
	p := s.cachedPolicy(cwd, Writing)
	if p.Unconfined {
		return ""
	}
	path = filepath.Clean(path)
	for _, ro := range p.ReadOnly {
		if within(path, ro) {
			return ro + " is a protected path (git control files, settings, .mcp.json, the scripts hooks run), read-only for this agent's commands too"
		}
	}
	for _, r := range append(slices.Clip(p.FrozenDirs), p.FrozenAll...) {
		if path == r || !within(path, r) {
			continue
		}
		rel, _ := filepath.Rel(r, path)
		first, _, deeper := strings.Cut(rel, string(filepath.Separator))
		top := filepath.Join(r, first)
		if exists(top) || (!deeper && !slices.Contains(p.FrozenAll, r)) {
			continue
		}
		// A root frozen for its missing settings directories (Landlock
		// cannot refuse one name alone) refuses commands any new
		// directory; the file tools name theirs, so only the protected
		// names are refused to them: a new notes/ at the top is fine.
		if !slices.Contains(p.FrozenAll, r) && !slices.Contains(settingsDirs, first) && first != ".git" {
			continue
		}
		why := "no new entry may be made at its top"
		if reason := frozenWhy(p, top); reason != "" {
			why = reason
		}
		if slices.Contains(settingsDirs, first) || first == ".git" {
			return top + " is a protected path, and " + r + " takes no new " + first + " at its top: " + why
		}
		return r + " takes no new " + first + " at its top: " + why
	}
	return ""
}
