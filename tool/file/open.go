package file

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/cohort-dev/cohort/internal/heldir"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/tool"
)

// Files are opened so that nothing can be swapped in between a check and
// the open (issue 36, invariant 4): no path is judged and then opened by
// name. A file to read is opened first (O_NONBLOCK, so a FIFO cannot
// block), and what was opened is judged: it must be a regular file, and
// its real path (the kernel's, /proc/self/fd) must be neither covered by
// a Read deny rule nor a process's /proc entry. A file to write is opened
// through os.Root rooted at the agent's write root that holds it
// (tool.Access.WriteRoots; the worktree for an isolated agent), so no
// link, however it changes meanwhile, leads out of that root: the parent
// directory is opened through the root and judged by its real path
// (protected paths need an approval), and the file is opened relative to
// that directory without following a link; a link is followed only
// through the root, and judged by where it lands. A write outside every
// root needs Env.Approved (a person, or an allow rule naming the path).

// openRead opens an existing regular file for reading and judges what it
// opened. Missing files come back as fs.ErrNotExist, for notFound.
func openRead(env *tool.Env, path string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = tool.Failf("%s is not a regular file (%s); only regular files can be read or edited", path, info.Mode().Type())
		if info.IsDir() {
			err = tool.Failf("%s is a directory, not a file; use Glob or `ls` through Bash to list it", path)
		}
	}
	if err == nil {
		err = judgeRead(env, path, f)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

// readAll reads a whole file through openRead.
func readAll(env *tool.Env, path string) ([]byte, error) {
	f, _, err := openRead(env, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// judgeRead refuses an opened file that is a process's /proc entry or
// that Read deny rules cover, by its real path.
func judgeRead(env *tool.Env, path string, f *os.File) error {
	real := realPath(f)
	if permission.ProcessPath(real) || permission.ProcessPath(filepath.Clean(path)) {
		return tool.Failf("%s is a file of a running process (%s); file tools do not open those", path, real)
	}
	if env.DeniedRead(real) {
		return tool.Failf("%s is covered by a Read deny rule (it is %s), so no file tool may open it", path, real)
	}
	return nil
}

// openWrite opens path for writing (read too, with rw), creating it with
// perm and its parent directories when create is set, without truncating:
// the caller truncates once it knows it writes. Without Env.Access it
// opens by name, as a tool outside a session does.
func openWrite(env *tool.Env, path string, perm fs.FileMode, create, rw bool) (*os.File, error) {
	flags := os.O_WRONLY
	if rw {
		flags = os.O_RDWR
	}
	if env == nil || env.Access == nil {
		if create {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return nil, tool.Failf("cannot create the directory for %s: %v", path, unwrapPath(err))
			}
			flags |= os.O_CREATE
		}
		return os.OpenFile(path, flags|syscall.O_CLOEXEC, perm)
	}
	rootDir, err := writeRoot(env, path)
	if err != nil {
		return nil, err
	}
	root, err := heldir.OpenRoot(rootDir) // a held cwd through its hold, not its name
	if err != nil {
		return nil, tool.Failf("cannot open %s: %v", rootDir, unwrapPath(err))
	}
	defer root.Close()
	rel, err := filepath.Rel(rootDir, resolvedPrefix(path))
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return nil, tool.Failf("%s is not a file inside %s", path, rootDir)
	}
	dirRel, base := filepath.Dir(rel), filepath.Base(rel)
	if err := judgeBounds(env, path, resolvedPrefix(path)); err != nil {
		return nil, err // before any directory is made for it
	}
	if create {
		if err := root.MkdirAll(dirRel, 0o755); err != nil {
			return nil, tool.Failf("cannot create the directory for %s inside %s: %v", path, rootDir, unwrapPath(err))
		}
	}
	dir, err := root.Open(dirRel)
	if err != nil {
		return nil, tool.Failf("cannot open the directory of %s inside %s: %v", path, rootDir, unwrapPath(err))
	}
	defer dir.Close()
	target := filepath.Join(realPath(dir), base)
	if err := judgeWrite(env, path, target); err != nil {
		return nil, err
	}
	if err := judgeBounds(env, path, target); err != nil {
		return nil, err
	}
	f, err := openNoFollow(dir, base, path, flags, create, perm)
	if !errors.Is(err, errLink) {
		return f, err
	}
	// base is a link: follow it through the root only, to an existing
	// file, and judge where it landed.
	f, err = root.OpenFile(rel, flags, 0)
	if err != nil {
		return nil, tool.Failf("%s is a symbolic link that does not lead to a file inside %s: %v", path, rootDir, unwrapPath(err))
	}
	err = judgeWrite(env, path, realPath(f))
	if err == nil {
		err = judgeBounds(env, path, realPath(f))
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// writeRoot picks the write root that holds path, judged by its resolved
// form (the root then confines the open, whatever changes meanwhile): the
// most specific one, so an isolated agent's worktree wins over the main
// checkout that holds it, which it may not write. Outside every root, only
// an approved call writes, rooted at "/".
func writeRoot(env *tool.Env, path string) (string, error) {
	roots := env.Access.WriteRoots(env.Cwd)
	if wt := env.Caller.Worktree; wt != "" {
		if r, err := filepath.EvalSymlinks(wt); err == nil {
			wt = r
		}
		roots = slices.DeleteFunc(roots, func(r string) bool { return r != wt && within(wt, r) })
	}
	resolved := resolvedPrefix(path)
	best := ""
	for _, r := range roots {
		if within(resolved, r) && len(r) > len(best) {
			best = r
		}
	}
	switch {
	case best != "":
		return best, nil
	case env.Approved:
		return "/", nil
	}
	return "", tool.Failf("writing %s is outside the directories this agent may write (%s); it needs the user's approval or an allow rule that names it", path, strings.Join(roots, ", "))
}

// judgeWrite refuses a protected target unless the call was approved,
// and a target Read deny rules cover.
func judgeWrite(env *tool.Env, path, target string) error {
	if env.DeniedRead(target) {
		return tool.Failf("%s is covered by a Read deny rule (it is %s), so no file tool may open it", path, target)
	}
	if !env.Approved && (env.Access.Protected(target) || env.Access.Protected(path)) {
		return tool.Failf("writing %s (%s) changes a protected path (settings, agents, hooks, MCP servers or git internals); it needs the user's approval or an allow rule that names it", path, target)
	}
	return nil
}

// judgeBounds is the second layer under judgeWrite: the sandbox's own
// protected paths (Env.Bounds), which hold when the permission layer's
// list is wrong, checked on the path the write really opens. An approved
// call writes where it was approved to.
func judgeBounds(env *tool.Env, path, target string) error {
	if env.Approved || env.Bounds == nil {
		return nil
	}
	if why := env.Bounds.WriteRefusal(env.Cwd, target); why != "" {
		return tool.Failf("writing %s (%s) is refused by the sandbox: %s; it needs the user's approval or an allow rule that names it", path, target, why)
	}
	return nil
}

// resolvedPrefix resolves the links of the longest existing prefix of
// path and appends the rest: only to pick a root and a relative path,
// which the root then holds to.
func resolvedPrefix(path string) string {
	r, err := resolveExisting(path)
	if err != nil {
		return filepath.Clean(path)
	}
	return r
}

// within reports whether p is dir or below it (both clean).
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// openFailure is an open's error as the model reads it: a tool.Failure
// as it is, anything else with the path.
func openFailure(path string, err error) error {
	var fail tool.Failure
	if errors.As(err, &fail) {
		return err
	}
	return tool.Failf("cannot open %s: %v", path, unwrapPath(err))
}

// errLink is openNoFollow's answer for a name that is a symbolic link.
var errLink = errors.New("the name is a symbolic link")

// realPath is where an open file really is, by the kernel's account
// (/proc/self/fd on Linux; the name it was opened by elsewhere).
func realPath(f *os.File) string {
	if p, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd())); err == nil {
		return p
	}
	return filepath.Clean(f.Name())
}
