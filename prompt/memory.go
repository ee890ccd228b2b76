package prompt

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/cohort-dev/cohort/internal/ownread"
	"github.com/cohort-dev/cohort/llm"
)

// MemoryNames are the memory file names read at every level, in order.
var MemoryNames = []string{"COHORT.md", "CLAUDE.md", "AGENTS.md"}

// maxMemoryBytes caps one memory file; longer files are truncated with a note.
const maxMemoryBytes = 40_000

// MemoryFile is one memory file read into the user context.
type MemoryFile struct {
	Path    string
	Scope   string // "user" or "project"
	Content string
}

// MemoryConfig says where to look for memory files.
type MemoryConfig struct {
	// UserDirs are searched first (e.g. $COHORT_HOME and ~/.claude).
	UserDirs []string
	// Root is the repository root (or the cwd outside git); every directory
	// from Root down to Cwd is searched.
	Root string
	Cwd  string
	// Denied reports whether a Read deny rule covers a path
	// (permission.Checker.DeniedRead); a memory file it covers, by name or
	// by where it leads, is left out.
	Denied func(path string) bool
}

// LoadMemory reads the memory files in a stable order: user directories,
// then each directory from the root down to the cwd. Unreadable and
// refused files are reported in the returned error (joined); the rest
// still load.
//
// A project's memory files are opened through internal/ownread rooted at
// the top of the directories searched: one that is a symbolic link out of
// the project (say to /proc/self/environ), or to a file a Read deny rule
// covers, is refused, since a repository can commit such a link. The
// user's own files may link anywhere but /proc, /dev and /sys.
func LoadMemory(cfg MemoryConfig) ([]MemoryFile, error) {
	var out []MemoryFile
	var errs []error
	read := func(root, dir, scope string) {
		for _, name := range MemoryNames {
			p := filepath.Join(dir, name)
			data, err := ownread.ReadFile(root, dir, name, maxMemoryBytes+1, cfg.Denied)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			var refused *ownread.Refused
			if errors.As(err, &refused) {
				errs = append(errs, fmt.Errorf("memory file %w", err))
				continue
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("memory file %s: %w", p, err))
				continue
			}
			text := string(data)
			if len(text) > maxMemoryBytes {
				text = text[:maxMemoryBytes] + "\n[… truncated: the file is longer than 40,000 bytes]"
			}
			out = append(out, MemoryFile{Path: p, Scope: scope, Content: text})
		}
	}
	for _, d := range cfg.UserDirs {
		read("", d, "user")
	}
	dirs := dirsDown(cfg.Root, cfg.Cwd)
	for _, d := range dirs {
		read(dirs[0], d, "project")
	}
	return out, errors.Join(errs...)
}

// dirsDown lists root, then each directory below it on the way to cwd. If
// cwd is not under root, only cwd is listed.
func dirsDown(root, cwd string) []string {
	if cwd == "" {
		return nil
	}
	rel, err := filepath.Rel(root, cwd)
	if root == "" || err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return []string{cwd}
	}
	dirs := []string{root}
	if rel == "." {
		return dirs
	}
	cur := root
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, part)
		dirs = append(dirs, cur)
	}
	return dirs
}

// UserContext renders memory files (and optional extra sections, such as the
// agent list) as the <system-reminder> block that opens the first user
// message. It returns false when there is nothing to say.
func UserContext(files []MemoryFile, extra ...string) (llm.Block, bool) {
	var b strings.Builder
	if len(files) > 0 {
		b.WriteString("Instructions from the project's and the user's memory files follow. Follow them; they override default behaviour where they conflict.\n")
		for _, f := range files {
			fmt.Fprintf(&b, "\nContents of %s (%s memory):\n\n%s\n", f.Path, f.Scope, strings.TrimRight(f.Content, "\n"))
		}
	}
	for _, e := range extra {
		if e == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(e)
		b.WriteString("\n")
	}
	if b.Len() == 0 {
		return llm.Block{}, false
	}
	return llm.Text("<system-reminder>\n" + b.String() + "</system-reminder>"), true
}
