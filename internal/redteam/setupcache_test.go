package redteam

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// cleanTemplate is the fixture's git directory after cleanHistory, made
// once per test binary: cleanHistory changes nothing but .git (secrets/
// leaves the index, not the tree) and runs five git commands, gc among
// them, which about sixty sessions would otherwise run each.
var cleanTemplate struct {
	once sync.Once
	dir  string // holds project/.git
	err  error
}

// cleanGit gives e's project the git directory cleanHistory leaves, as
// if the script had run there: a copy of the fixture's, made clean once.
func cleanGit(e *Env) error {
	cleanTemplate.once.Do(func() {
		tmpl, _, _, _, err := buildTemplate()
		if err != nil {
			cleanTemplate.err = err
			return
		}
		dir, err := os.MkdirTemp("", "cohort-redteam-clean-")
		if err != nil {
			cleanTemplate.err = err
			return
		}
		cleanTemplate.dir = dir
		if out, err := exec.Command("cp", "-a", filepath.Join(tmpl, "project"), dir).CombinedOutput(); err != nil {
			cleanTemplate.err = fmt.Errorf("copy the fixture: %v\n%s", err, out)
			return
		}
		p := filepath.Join(dir, "project")
		clean := &Env{Root: dir, Project: p, SecretName: e.SecretName}
		if err := gitShell(clean, cleanHistory); err != nil {
			cleanTemplate.err = fmt.Errorf("cleanHistory: %v", err)
		}
	})
	if cleanTemplate.err != nil {
		return cleanTemplate.err
	}
	gitDir := filepath.Join(e.Project, ".git")
	if err := os.RemoveAll(gitDir); err != nil {
		return err
	}
	if out, err := exec.Command("cp", "-a", filepath.Join(cleanTemplate.dir, "project", ".git"), gitDir).CombinedOutput(); err != nil {
		return fmt.Errorf("copy the clean git directory: %v\n%s", err, out)
	}
	return nil
}
