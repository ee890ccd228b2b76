package permission

import (
	"fmt"

	"github.com/cohort-dev/cohort/settings"
)

// A settings file obeyed only because a person approved its content
// (settings.Source.Approved, internal/configtrust) lies where agents
// write: the model may have written it, and the person who approved it
// read its bytes, not every consequence. What it may do here:
//
//   - its deny and ask rules, and disableBypassPermissionsMode, apply:
//     they narrow;
//   - its allow rules skip prompts, within the bounds the person's own
//     files and flags set: a path rule (Read, Edit, Write, ...) and a
//     tool-wide one apply only to paths inside the working directories
//     and not to protected paths (settings, agents, .mcp.json, git
//     internals, hook scripts), and no such rule makes a call approved
//     (Rule.ByApproval: the file tools write outside their roots, or on a
//     protected path, only for a person or a person's rule). Bash, MCP
//     and WebFetch rules apply as written: the sandbox, computed from the
//     person's sources alone, bounds what an allowed command does;
//   - its defaultMode applies, except bypassPermissions, the one mode in
//     which the person's sandbox.allowUnsandboxedCommands true lets a
//     command out of the sandbox without asking;
//   - its additionalDirectories are not applied: each would make a tree
//     writable to the file tools and to every command.
//
// What is not applied is reported at the start, naming the file and the
// entry (Checker.Problems).

// approvedNotApplied is the start-up report of an entry of an approved
// file that is not applied, and why.
func approvedNotApplied(src *settings.Source, t settings.Text, key, why string) error {
	return fmt.Errorf("%s:%d:%d: %s %q is not applied: this file is obeyed because you approved its content, but it lies where agents' commands write, and %s; set it in your user or the project's .cohort/settings.json, or pass it as a flag, instead",
		src.Path, t.Line, t.Col, key, t.Value, why)
}

// noteApprovedAllow reports an approved file's allow rule whose pattern
// names a place outside its project (absolute or in the home): it applies
// only inside the working directories.
func (sh *shared) noteApprovedAllow(r *Rule, src *settings.Source, t settings.Text) {
	if r.path == nil || (r.path.anchor != anchorAbs && r.path.anchor != anchorHome) {
		return
	}
	sh.problems = append(sh.problems, fmt.Errorf("%s:%d:%d: permissions.allow %q applies only inside the working directories: this file is obeyed because you approved its content, but it lies where agents' commands write, and its rules cannot let agents past the directories your own settings and flags make writable; put the rule in your user or the project's .cohort/settings.json instead",
		src.Path, t.Line, t.Col, t.Value))
}

// approvedReach reports whether an allow rule of an approved file may
// apply to a path: inside the working directories (the person's: an
// approved file adds none) and not protected.
func (e *evaluation) approvedReach(f pathForms) bool {
	return e.inWorkDirs(f.resolved) && !e.protected(f.resolved) && !e.protected(f.literal)
}
