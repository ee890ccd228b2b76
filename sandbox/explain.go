package sandbox

import (
	"path/filepath"
	"regexp"
	"strings"
)

// denial finds a path in a line that reports a refused write: "touch:
// cannot touch '/x': Permission denied", "bash: /x: Read-only file
// system", "PermissionError: [Errno 13] Permission denied: '/x'".
var (
	denialLine = regexp.MustCompile(`Permission denied|Read-only file system|Operation not permitted`)
	quoted     = regexp.MustCompile("['‘\"`]([^'’\"`]+)['’\"`]")
	colonPath  = regexp.MustCompile(`(?:^|\s)((?:/|\./|\.\./|~/)?[^\s:'"]+): (?:Permission denied|Read-only file system|Operation not permitted)`)
)

// Explain returns notes for the model about writes in output that the
// sandbox blocked, given the writable trees and protected paths of the
// command's agent and the directory it ran in; "" when there are none. A
// bare EACCES reads like a broken machine; the note says what happened
// and what the user can do.
func Explain(output, dir string, writable, protected []string) string {
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
			if !strings.Contains(c, "/") && !strings.Contains(c, ".") {
				continue // a word, not a path
			}
			p := c
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			p = filepath.Clean(p)
			if seen[p] {
				continue
			}
			seen[p] = true
			if note := explainPath(p, writable, protected); note != "" {
				notes = append(notes, note)
			}
		}
	}
	return strings.Join(notes, "\n")
}

func explainPath(p string, writable, protected []string) string {
	for _, ro := range protected {
		if within(p, ro) {
			return "blocked by the sandbox: " + p + " is a protected path (git hooks and config, settings, hook scripts), read-only for commands; change it with the Edit or Write tool, which asks the user"
		}
	}
	for _, w := range writable {
		if within(p, w) {
			return ""
		}
	}
	return "blocked by the sandbox: " + p + " is outside the writable dirs; the user can add it to sandbox.allowWrite"
}
