package memory

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cohort-dev/cohort/internal/ownread"
)

// Names and limits of a memory directory.
const (
	// IndexName is the index file of a memory directory.
	IndexName = "MEMORY.md"
	// MaxIndexLines and MaxIndexBytes bound how much of the index is
	// loaded into an agent's context.
	MaxIndexLines = 200
	MaxIndexBytes = 25_000
)

// ErrOutside is returned by Prepare for a memory directory that resolves
// outside its base.
var ErrOutside = errors.New("the memory directory is outside where Cohort keeps memory")

// ProjectDir returns the memory directory of the project whose transcripts
// live in projectDir ($COHORT_HOME/projects/{slug}).
func ProjectDir(projectDir string) string { return filepath.Join(projectDir, "memory") }

// AgentDir returns the memory directory of the agent type name for its
// definition's scope (user, project or local), and the base Prepare checks
// it against.
func AgentDir(scope, name, cohortHome, projectRoot string) (dir, base string, err error) {
	if name == "" || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return "", "", fmt.Errorf("agent memory: %q is not usable as a directory name", name)
	}
	switch scope {
	case "user":
		return filepath.Join(cohortHome, "agent-memory", name), cohortHome, nil
	case "project":
		return filepath.Join(projectRoot, ".cohort", "agent-memory", name), projectRoot, nil
	case "local":
		return filepath.Join(projectRoot, ".cohort", "agent-memory-local", name), projectRoot, nil
	}
	return "", "", fmt.Errorf("agent memory: scope %q is not one of user, project, local", scope)
}

// Prepare creates dir (0700) if it is missing and checks that it resolves
// inside base: a directory that is (or lies under) a symbolic link pointing
// elsewhere is refused with ErrOutside, naming the link and what to do. It
// returns dir with its links resolved.
func Prepare(base, dir string) (string, error) {
	if !filepath.IsAbs(dir) || !filepath.IsAbs(base) {
		return "", fmt.Errorf("memory directory %s: the path and its base %s must be absolute", dir, base)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("memory directory: %w", err)
	}
	resBase, err := filepath.EvalSymlinks(base)
	if err != nil {
		return "", fmt.Errorf("memory directory %s: resolve %s: %w", dir, base, err)
	}
	res, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("memory directory %s: %w", dir, err)
	}
	if fi, err := os.Stat(res); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("memory directory %s is not a directory; move it aside", dir)
	}
	if res != resBase && !strings.HasPrefix(res, resBase+string(filepath.Separator)) {
		return "", fmt.Errorf("%w: %s resolves to %s, outside %s; remove the link (Cohort recreates the directory) or point it inside %s", ErrOutside, dir, res, base, base)
	}
	return res, nil
}

// Index is a memory directory's MEMORY.md as loaded into a context.
type Index struct {
	// Path is the index file's path.
	Path string
	// Content is what is loaded: the whole file, or its first lines within
	// the limits followed by a note.
	Content string
	// Lines and Bytes are the file's full size; Truncated reports that
	// Content holds less.
	Lines, Bytes int
	Truncated    bool
}

// LoadIndex reads dir's MEMORY.md within MaxIndexLines and MaxIndexBytes.
// A missing index is not an error: ok is false. The index is opened
// through internal/ownread rooted at dir: one that is a symbolic link out
// of dir, or to a file denied covers, is refused (an *ownread.Refused
// error naming it and what to do) and not loaded.
func LoadIndex(dir string, denied func(path string) bool) (ix Index, ok bool, err error) {
	path := filepath.Join(dir, IndexName)
	data, err := ownread.ReadFile(dir, dir, IndexName, 0, denied)
	if errors.Is(err, fs.ErrNotExist) {
		return Index{Path: path}, false, nil
	}
	var refused *ownread.Refused
	if errors.As(err, &refused) {
		return Index{Path: path}, false, fmt.Errorf("memory index %w", err)
	}
	if err != nil {
		return Index{Path: path}, false, fmt.Errorf("memory index %s: %w", path, err)
	}
	ix = Index{Path: path, Bytes: len(data)}
	text := strings.TrimRight(string(bytes.ToValidUTF8(data, []byte("\uFFFD"))), "\n")
	if text == "" {
		return ix, false, nil
	}
	lines := strings.Split(text, "\n")
	ix.Lines = len(lines)
	var b strings.Builder
	kept := 0
	for _, l := range lines {
		if kept == MaxIndexLines || b.Len()+len(l)+1 > MaxIndexBytes {
			break
		}
		b.WriteString(l)
		b.WriteByte('\n')
		kept++
	}
	ix.Content = strings.TrimRight(b.String(), "\n")
	if kept < len(lines) {
		ix.Truncated = true
		ix.Content += fmt.Sprintf("\n\n[… %s was cut here: it has %d lines and %d bytes, and only the first %d lines (at most %d lines and %d bytes) are loaded. Keep the index to one short line per entry and move details into topic files.]",
			IndexName, len(lines), len(data), kept, MaxIndexLines, MaxIndexBytes)
	}
	return ix, true, nil
}
