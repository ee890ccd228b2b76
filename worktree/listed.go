package worktree

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/cohort-dev/cohort/internal/ownread"
)

// Listed is one of Cohort's worktrees of the repository, as git's records
// in the common dir name it.
type Listed struct {
	// Path is the worktree's directory.
	Path string
	// Base is the commit it was made from ("" when not recorded).
	Base string
}

// Listed returns Cohort's worktrees of the repository (those under
// .cohort/worktrees), read from the common dir's records without running
// git: what a checkpoint covers besides the main checkout.
func (m *Manager) Listed() []Listed {
	dirs, err := os.ReadDir(filepath.Join(m.common, "worktrees"))
	if err != nil {
		return nil
	}
	var out []Listed
	for _, d := range dirs {
		admin := filepath.Join(m.common, "worktrees", d.Name())
		data, err := ownread.GitState(filepath.Join(admin, "gitdir"), ownread.MaxGitRef)
		if err != nil {
			continue
		}
		path := canonical(filepath.Dir(strings.TrimSpace(string(data))))
		if m.slugOf(path) == "" {
			continue
		}
		if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
			continue
		}
		base, _ := ownread.GitState(filepath.Join(admin, baseFile), ownread.MaxGitRef)
		out = append(out, Listed{Path: path, Base: strings.TrimSpace(string(base))})
	}
	return out
}
