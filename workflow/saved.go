package workflow

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cohort-dev/cohort/internal/ownread"
	"github.com/cohort-dev/cohort/workflow/host"
)

// SavedDirs are where saved workflows live below a project (and the
// user's home); see host.SavedDirs.
var SavedDirs = host.SavedDirs

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
	path, err := host.FindSaved(name, roots...)
	if err != nil {
		return nil, err
	}
	s := loadSaved(name, path)
	return s.Script, s.Err
}

// LoadFile loads a script from a file; errors name the path. It is read
// as internal/ownread reads instructions (a saved workflow may lie where
// agents write): a FIFO, a link into /proc or a file over 4 MiB is
// refused, not read.
func LoadFile(path string) (*Script, error) {
	src, err := ownread.Text(path, ownread.MaxConfig, nil)
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
const ScriptName = host.ScriptName

// NewRun makes a run directory below root and writes the script into it
// (host.NewRun).
func NewRun(root string, s *Script) (id, dir string, err error) { return host.NewRun(root, s.Source) }

// RunDir returns an existing run's directory below root (host.RunDir).
func RunDir(root, id string) (string, error) { return host.RunDir(root, id) }
