package permission

import (
	"fmt"

	"github.com/cohort-dev/cohort/settings"
)

// What a file obeyed by approval may do is in the package doc ("Files
// obeyed by approval").

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
