package host

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cohort-dev/cohort/internal/lazyre"
)

// SavedDirs are where saved workflows live below a project (and the user's
// home): Claude Code's directory first, then ours. A name found in both is
// Claude Code's.
var SavedDirs = []string{filepath.Join(".claude", "workflows"), filepath.Join(".cohort", "workflows")}

var savedName = lazyre.New(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

// FindSaved returns the file of the saved workflow called name in the
// first root that has one; nothing is loaded.
func FindSaved(name string, roots ...string) (string, error) {
	if !savedName.MatchString(name) {
		return "", fmt.Errorf("%q is not a saved workflow name (letters, digits, '-', '_' and '.')", name)
	}
	for _, root := range roots {
		if root == "" {
			continue
		}
		for _, d := range SavedDirs {
			path := filepath.Join(root, d, name+".js")
			if _, err := os.Stat(path); err == nil {
				return path, nil
			}
		}
	}
	return "", fmt.Errorf("no saved workflow %q in %s below %s", name, strings.Join(SavedDirs, " or "), strings.Join(roots, ", "))
}

// ScriptName is a run's copy of its script inside the run's directory.
const ScriptName = "script.js"

// NewRun makes a run directory below root (a session's workflows
// directory) and writes the script into it, so the model can iterate by
// editing that file and resuming. The run id is also the id of the run's
// task ("wf" and 16 hex digits).
func NewRun(root, source string) (id, dir string, err error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", err
	}
	id = "wf" + hex.EncodeToString(b[:])
	dir = filepath.Join(root, id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", fmt.Errorf("create workflow run dir: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ScriptName), []byte(source), 0o600); err != nil {
		return "", "", fmt.Errorf("save workflow script: %w", err)
	}
	return id, dir, nil
}

// RunDir returns an existing run's directory below root; id is checked so
// it cannot name a path outside root.
func RunDir(root, id string) (string, error) {
	if !ValidRunID(id) {
		return "", fmt.Errorf("%q is not a workflow run id (wf and 16 hex digits)", id)
	}
	dir := filepath.Join(root, id)
	if _, err := os.Stat(filepath.Join(dir, ScriptName)); err != nil {
		return "", fmt.Errorf("no workflow run %s in %s", id, root)
	}
	return dir, nil
}

var runID = lazyre.New(`^wf[0-9a-f]{16}$`)

// ValidRunID reports whether id has a run id's form.
func ValidRunID(id string) bool { return runID.MatchString(id) }
