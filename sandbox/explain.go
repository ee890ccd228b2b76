package sandbox

import (
	"path/filepath"
	"strings"

	"github.com/cohort-dev/cohort/internal/lazyre"
)

// denial finds a path in a line that reports a refused write: "touch:
// cannot touch '/x': Permission denied", "bash: /x: Read-only file
// system", "PermissionError: [Errno 13] Permission denied: '/x'".
var (
	denialLine = lazyre.New(`(?i)permission denied|read-only file system|operation not permitted`)
	quoted     = lazyre.New("['‘\"`]([^'’\"`]+)['’\"`]")
	colonPath  = lazyre.New(`(?i)(?:^|\s)((?:/|\./|\.\./|~/)?[^\s:'"]+): (?:permission denied|read-only file system|operation not permitted)`)
)

// Explain returns notes for the model about writes in output that the
// sandbox blocked, given the writable trees and protected paths of the
// command's agent and the directory it ran in; "" when there are none. A
// bare EACCES reads like a broken machine; the note says what happened
// and what the user can do.
func Explain(output, dir string, writable, protected []string) string {
	return explain(output, dir, &Policy{Writable: writable, ReadOnly: protected})
}

// explain is Explain for a policy, which also knows its frozen roots.
func explain(output, dir string, pol *Policy) string {
	var notes []string
	seen := map[string]bool{}
	for _, line := range strings.Split(output, "\n") {
		if !denialLine.MatchString(line) {
			continue
		}
		var cands []string
		for _, m := range quoted.FindAllStringSubmatch(line, -1) {
			cands = append(cands, m[1])
		}
		for _, m := range colonPath.FindAllStringSubmatch(line, -1) {
			cands = append(cands, m[1])
		}
		for _, c := range cands {
			// A bare word is taken for a path only where a frozen root
			// explains it ("cannot create directory 'build'").
			word := !strings.Contains(c, "/") && !strings.Contains(c, ".")
			p := c
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			p = filepath.Clean(p)
			if seen[p] || (word && frozenWhy(pol, p) == "") {
				continue
			}
			seen[p] = true
			if note := explainPath(p, pol); note != "" {
				notes = append(notes, note)
			}
		}
	}
	return strings.Join(notes, "\n")
}

func explainPath(p string, pol *Policy) string {
	for _, ro := range pol.ReadOnly {
		if within(p, ro) {
			return "blocked by the sandbox: " + p + " is a protected path (git hooks and config, settings, hook scripts), read-only for commands; change it with the Edit or Write tool, which asks the user"
		}
	}
	for _, w := range pol.SelfBound {
		if p == w {
			return "blocked by the sandbox: " + p + " holds a protected path (git hooks and config, settings, hook scripts) and cannot be renamed or removed"
		}
	}
	if reason := frozenWhy(pol, p); reason != "" {
		root := filepath.Dir(p)
		return "blocked by the sandbox: " + root + " takes no new directories or links at its top, because " + reason +
			"; make the directory inside an existing one, or ask the user to create the missing settings directory (for example mkdir " + filepath.Join(root, ".claude") + " " + filepath.Join(root, ".cohort") + "), which lifts this"
	}
	for _, w := range pol.Writable {
		if within(p, w) {
			return ""
		}
	}
	return "blocked by the sandbox: " + p + " is outside the writable dirs; the user can add it to sandbox.allowWrite"
}

// frozenWhy says why p's directory, a frozen root, takes no new entry;
// "" when it is not one.
func frozenWhy(pol *Policy, p string) string {
	for _, why := range pol.Why {
		if root, reason, _ := strings.Cut(why, ": "); filepath.Dir(p) == root {
			return reason
		}
	}
	return ""
}
