package workflow

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// SavedDirs are where saved workflows live below a project (and the user's
// home): Claude Code's directory first, then ours. A name found in both is
// Claude Code's.
var SavedDirs = []string{filepath.Join(".claude", "workflows"), filepath.Join(".cohort", "workflows")}

// Saved is a saved workflow found on disk.
type Saved struct {
	Name   string // the file name without ".js"
	Path   string
	Script *Script // nil when Err is set
	Err    error   // why the file could not be loaded
}

// List returns the saved workflows below each root (a project directory,
// then the home directory), the first of a name winning. Files that do not
// load are listed with their error, so a listing shows what to fix.
func List(roots ...string) ([]Saved, error) {
	seen := map[string]bool{}
	var out []Saved
	for _, root := range roots {
		if root == "" {
			continue
		}
		for _, d := range SavedDirs {
			dir := filepath.Join(root, d)
			ents, err := os.ReadDir(dir)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("list saved workflows: %w", err)
			}
			for _, e := range ents {
				name, ok := strings.CutSuffix(e.Name(), ".js")
				if !ok || e.IsDir() || seen[name] {
					continue
				}
				seen[name] = true
				out = append(out, loadSaved(name, filepath.Join(dir, e.Name())))
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Find loads the saved workflow called name from the first root that has it.
func Find(name string, roots ...string) (*Script, error) {
	if !savedName.MatchString(name) {
		return nil, fmt.Errorf("%q is not a saved workflow name (letters, digits, '-', '_' and '.')", name)
	}
	for _, root := range roots {
		if root == "" {
			continue
		}
		for _, d := range SavedDirs {
			path := filepath.Join(root, d, name+".js")
			if _, err := os.Stat(path); err == nil {
				s := loadSaved(name, path)
				return s.Script, s.Err
			}
		}
	}
	return nil, fmt.Errorf("no saved workflow %q in %s below %s", name, strings.Join(SavedDirs, " or "), strings.Join(roots, ", "))
}

var savedName = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

// LoadFile loads a script from a file; errors name the path.
func LoadFile(path string) (*Script, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read workflow script: %w", err)
	}
	return Load(path, string(src))
}

func loadSaved(name, path string) Saved {
	s, err := LoadFile(path)
	return Saved{Name: name, Path: path, Script: s, Err: err}
}

// ScriptName is a run's copy of its script inside the run's directory.
const ScriptName = "script.js"

// NewRun makes a run directory below root (a session's workflows
// directory) and writes the script into it, so the model can iterate by
// editing that file and resuming. It returns the run id and directory.
func NewRun(root string, s *Script) (id, dir string, err error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", err
	}
	id = "wf_" + hex.EncodeToString(b[:])
	dir = filepath.Join(root, id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", fmt.Errorf("create workflow run dir: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ScriptName), []byte(s.Source), 0o600); err != nil {
		return "", "", fmt.Errorf("save workflow script: %w", err)
	}
	return id, dir, nil
}

// RunDir returns an existing run's directory below root; id is checked so
// it cannot name a path outside root.
func RunDir(root, id string) (string, error) {
	if !runID.MatchString(id) {
		return "", fmt.Errorf("%q is not a workflow run id (wf_ and 16 hex digits)", id)
	}
	dir := filepath.Join(root, id)
	if _, err := os.Stat(filepath.Join(dir, ScriptName)); err != nil {
		return "", fmt.Errorf("no workflow run %s in %s", id, root)
	}
	return dir, nil
}

var runID = regexp.MustCompile(`^wf_[0-9a-f]{16}$`)
