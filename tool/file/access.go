package file

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/tool"
)

// filePath is a call's path (tool.AbsPath), refused when a Read deny rule
// covers it: every file tool shows what it opens (Read its lines, Edit a
// snippet, Write and NotebookEdit the original), so this check below the
// permission check's holds for all of them.
func filePath(env *tool.Env, field, p string) (string, error) {
	path, err := tool.AbsPath(env, field, p)
	if err != nil {
		return "", err
	}
	if env.DeniedRead(path) {
		return "", tool.Failf("%s is covered by a Read deny rule (or cannot be checked against one), so no file tool may open it", path)
	}
	return path, nil
}

// statFile returns the file's info, or nil if it does not exist. Anything
// that is not a regular file is a tool.Failure.
func statFile(path string) (fs.FileInfo, error) {
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, tool.Failf("cannot access %s: %v", path, unwrapPath(err))
	}
	if info.IsDir() {
		return nil, tool.Failf("%s is a directory, not a file; use Glob or `ls` through Bash to list it", path)
	}
	if !info.Mode().IsRegular() {
		return nil, tool.Failf("%s is not a regular file (%s); only regular files can be read or edited", path, info.Mode().Type())
	}
	return info, nil
}

// unwrapPath drops the path from an *fs.PathError, which messages already
// name.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// notFound describes a missing file, suggesting similar names nearby.
func notFound(path string) error {
	msg := "File does not exist: " + path
	dir := filepath.Dir(path)
	if _, err := os.Stat(dir); err != nil {
		return tool.Failure(msg + fmt.Sprintf(" (the directory %s does not exist either)", dir))
	}
	if s := similarNames(path); len(s) > 0 {
		msg += ". Similar names in that directory: " + strings.Join(s, ", ")
	}
	return tool.Failure(msg)
}

// similarNames returns up to three entries of path's directory whose names
// resemble its base name. It gives up on very large directories.
func similarNames(path string) []string {
	const maxEntries = 5000
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(maxEntries + 1)
	if len(names) > maxEntries {
		return nil
	}
	base := filepath.Base(path)
	lower := strings.ToLower(base)
	stem := strings.TrimSuffix(lower, filepath.Ext(lower))
	var out []string
	slices.Sort(names)
	for _, n := range names {
		ln := strings.ToLower(n)
		if ln == lower || strings.TrimSuffix(ln, filepath.Ext(ln)) == stem || editDistance(ln, lower, 2) <= 2 {
			out = append(out, n)
			if len(out) == 3 {
				break
			}
		}
	}
	return out
}

// editDistance returns the Levenshtein distance of a and b, or limit+1 as
// soon as it is certain to exceed limit.
func editDistance(a, b string, limit int) int {
	ra, rb := []rune(a), []rune(b)
	if d := len(ra) - len(rb); d > limit || -d > limit {
		return limit + 1
	}
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			best = min(best, cur[j])
		}
		if best > limit {
			return limit + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// checkFresh enforces read-before-write: the agent must have read path and
// the file must not have changed since.
func checkFresh(env *tool.Env, path string, info fs.FileInfo) error {
	if env == nil || env.Files == nil {
		return tool.Failf("cannot verify that %s was read first (no read-file cache in this context); refusing to change it", path)
	}
	state, ok := env.Files.Get(path)
	if !ok {
		return tool.Failf("%s has not been read yet; Read it first, then change it", path)
	}
	if !state.ModTime.Equal(info.ModTime()) || state.Size != info.Size() {
		return tool.Failf("%s has changed since it was last read (by the user, a formatter or another agent); Read it again before changing it", path)
	}
	return nil
}

// record notes the current state of path in the agent's read-file cache.
func record(env *tool.Env, path string, partial bool) {
	if env == nil || env.Files == nil {
		return
	}
	if info, err := os.Stat(path); err == nil {
		env.Files.Put(path, tool.FileState{ModTime: info.ModTime(), Size: info.Size(), Partial: partial})
	}
}

// checkWrite asks the write guard about path and, if symlinks lead
// elsewhere, about the real target too.
func checkWrite(env *tool.Env, path string) error {
	if err := env.CheckWrite(path); err != nil {
		return tool.Failf("writing %s is not allowed: %v", path, err)
	}
	real, err := resolveExisting(path)
	if err != nil {
		return tool.Failf("cannot resolve %s: %v", path, err)
	}
	if real != path {
		if err := env.CheckWrite(real); err != nil {
			return tool.Failf("writing %s (which resolves to %s) is not allowed: %v", path, real, err)
		}
	}
	return nil
}

// resolveExisting resolves symlinks in the longest existing prefix of path
// and appends the rest.
func resolveExisting(path string) (string, error) {
	rest := ""
	p := path
	for {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return path, nil
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// writeFile writes data to path in place (openWrite), creating parent
// directories and keeping the permissions of an existing file.
func writeFile(env *tool.Env, path string, data []byte, existing fs.FileInfo) error {
	perm := fs.FileMode(0o644)
	if existing != nil {
		perm = existing.Mode().Perm()
	}
	f, err := openWrite(env, path, perm, true, false)
	if err != nil {
		var fail tool.Failure
		if errors.As(err, &fail) {
			return err
		}
		return tool.Failf("cannot write %s: %v", path, unwrapPath(err))
	}
	err = f.Truncate(0)
	if err == nil {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return tool.Failf("cannot write %s: %v", path, unwrapPath(err))
	}
	return nil
}

// isBinary reports whether the start of a file looks binary.
func isBinary(head []byte) bool { return bytes.IndexByte(head, 0) >= 0 }

// sniffLen is how much of a file binary detection looks at.
const sniffLen = 8 << 10

// countLines counts lines as an editor shows them.
func countLines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
