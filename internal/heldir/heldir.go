// Package heldir holds directories by descriptor, so that a directory
// judged once is the one every later use reaches, whatever its name
// comes to lead to.
//
// An Agent call may name its child's working directory (the agent_cwd
// flag). Cohort vets that directory once, and later the sandbox confines
// each of the child's commands to it and the file tools root their writes
// at it. Named each time, a folder the model flips between a directory
// and a link outside (a background loop) is the project's when checked
// and the outside when a command runs. So the session resolves the
// directory once and holds it (Hold): an O_PATH descriptor opened on the
// resolved path with no link followed (openat2 RESOLVE_NO_SYMLINKS), so
// the held directory is the one the resolved name led to, and the path
// judged is the one held. Later uses derive from the hold, never from the
// name: Lookup finds it by that path, OpenRoot opens an os.Root through
// the descriptor (/proc/self/fd/N), and the sandbox's launcher accepts
// the path as a writable root only when, opened with no link followed,
// it is the held inode (Identity), else it refuses to set the policy up.
//
// Decisions: the registry is process-wide and keyed by the resolved path,
// with a count of holders, so a session's child agents that share a cwd
// share one descriptor and the sandbox and file tools need no new
// parameter; a second Hold of a path whose name now leads to another
// directory than the one held there is refused rather than replacing the
// hold (the two would be told apart by nothing but time). A held inode
// cannot be reused by another file while the descriptor is open, so the
// (device, inode) pair names it for as long as it is held.
package heldir

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Dir is a directory held open.
type Dir struct {
	f        *os.File // O_PATH
	path     string
	dev, ino uint64
	refs     int // under mu
}

var (
	mu   sync.Mutex
	held = map[string]*Dir{}
)

// Hold resolves path's links once and holds the directory it leads to.
// Release it when done.
func Hold(path string) (*Dir, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	f, err := OpenNoLinks(real)
	if err != nil {
		return nil, fmt.Errorf("%s changed while it was being opened (a link appeared on the way to it: %v); name a directory that stays put", path, err)
	}
	dev, ino, err := identity(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	mu.Lock()
	defer mu.Unlock()
	if d, ok := held[real]; ok {
		f.Close()
		if d.dev != dev || d.ino != ino {
			return nil, fmt.Errorf("%s is no longer the directory an agent was given there earlier in this session (it was replaced); name another", real)
		}
		d.refs++
		return d, nil
	}
	d := &Dir{f: f, path: real, dev: dev, ino: ino, refs: 1}
	held[real] = d
	return d, nil
}

// Lookup returns the hold of a resolved path, or nil.
func Lookup(path string) *Dir {
	mu.Lock()
	defer mu.Unlock()
	return held[filepath.Clean(path)]
}

// Path is the resolved path the directory was held at.
func (d *Dir) Path() string { return d.path }

// Handle names the held directory through this process's descriptor
// (/proc/self/fd/N): opening it reaches the held inode, whatever Path
// leads to now. It is valid while the hold is.
func (d *Dir) Handle() string { return "/proc/self/fd/" + strconv.Itoa(int(d.f.Fd())) }

// Identity is the held directory's device and inode.
func (d *Dir) Identity() (dev, ino uint64) { return d.dev, d.ino }

// Release drops one hold; the last closes the descriptor.
func (d *Dir) Release() {
	mu.Lock()
	defer mu.Unlock()
	if d.refs--; d.refs > 0 {
		return
	}
	if held[d.path] == d {
		delete(held, d.path)
	}
	d.f.Close()
}

// OpenRoot opens an os.Root at dir: through its hold when dir is held
// (the held inode, whatever the name leads to now), else by name.
func OpenRoot(dir string) (*os.Root, error) {
	mu.Lock()
	defer mu.Unlock() // the descriptor stays open while the root is opened through it
	d := held[filepath.Clean(dir)]
	if d == nil {
		return os.OpenRoot(dir)
	}
	r, err := os.OpenRoot(d.Handle())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	return r, nil
}

// splitPath lists an absolute path's names, "." and "" left out.
func splitPath(path string) []string {
	var out []string
	for _, n := range strings.Split(filepath.Clean(path), "/") {
		if n != "" && n != "." {
			out = append(out, n)
		}
	}
	return out
}
