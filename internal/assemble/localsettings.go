package assemble

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cohort-dev/cohort/internal/gitrepo"
	"github.com/cohort-dev/cohort/internal/safegit"
	"github.com/cohort-dev/cohort/permission"
)

// persister saves the rules an "always allow" answer adds
// (permission.SettingsPersister) and keeps .cohort/settings.local.json —
// the user's, for this machine — and the settings' lock files out of the
// repository's git status, as the agent worktrees are: through the
// repository's info/exclude (safegit.Exclude), never .gitignore. A
// project outside git has nothing to exclude; a failure to exclude is a
// warning, the rule is saved.
func (p *Plan) persister() func(context.Context, permission.RuleUpdate) error {
	save := permission.SettingsPersister(p.Process.Paths)
	root := p.Process.Paths.ProjectRoot()
	return func(ctx context.Context, u permission.RuleUpdate) error {
		if err := save(ctx, u); err != nil {
			return err
		}
		var names []string
		switch u.Destination {
		case permission.DestLocal:
			names = []string{"settings.local.json", "settings.local.json.lock"}
		case permission.DestProject:
			names = []string{"settings.json.lock"} // the settings are the team's; the lock is not
		}
		if err := excludeCohortFiles(root, names...); err != nil {
			fmt.Fprintf(p.Process.Stderr, "cohort: warning: %v\n", err)
		}
		return nil
	}
}

// excludeCohortFiles adds the files named in root's .cohort directory to
// the exclude file of the repository holding root, if any.
func excludeCohortFiles(root string, names ...string) error {
	if len(names) == 0 {
		return nil
	}
	repo, err := gitrepo.Find(root)
	if err != nil {
		return nil // not in a repository (or none readable): nothing shows them
	}
	dir := filepath.Join(root, ".cohort")
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	rel, err := filepath.Rel(repo.WorkTree, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return nil
	}
	var patterns []string
	for _, n := range names {
		patterns = append(patterns, "/"+filepath.ToSlash(filepath.Join(rel, n)))
	}
	return safegit.Exclude(repo.CommonDir, "Cohort's files for this machine", patterns...)
}
