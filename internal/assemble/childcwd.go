package assemble

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/cohort-dev/cohort/internal/heldir"
	"github.com/cohort-dev/cohort/sandbox"
)

// checkCwd vets the cwd an Agent call asks for (the agent_cwd flag) and
// returns the one the child works in: the directory it names, resolved
// once and held (package internal/heldir) for the rest of the session.
// The check judges the held directory, and everything later derives from
// the hold, not from the name: the sandbox confines the child's commands
// to that very directory (or refuses to run them), and the file tools
// root their writes at it. A name the model flips between a folder and a
// link outside after the check so leads nowhere.
func (s *Session) checkCwd(parentCwd, cwd string) (string, error) {
	d, err := heldir.Hold(cwd)
	if err != nil {
		return "", err
	}
	if err := s.vetCwd(parentCwd, d.Path()); err != nil {
		d.Release()
		return "", err
	}
	s.cwds.add(d)
	return d.Path(), nil
}

// vetCwd vets a child's resolved cwd. A child's sandbox is computed from
// its own cwd — that tree writable, the settings and git dirs at its top
// protected — so a cwd chosen by the model must not widen what commands
// may write: every tree the child may write must lie in one its parent
// may write, and every path the parent's sandbox protects inside those
// trees must stay protected for the child. Without a sandbox the cwd must
// lie in the parent's working directories. This holds whatever the cwd
// is (outside the project, the project's .cohort or a folder inside it, a
// hook script's folder, the home directory, a link to any of them): the
// check compares the two policies, not names.
func (s *Session) vetCwd(parentCwd, real string) error {
	if s.sandbox == nil {
		dirs := []string{parentCwd}
		if s.checker != nil {
			dirs = append(dirs, s.checker.WorkingDirs()...)
		}
		if !slices.ContainsFunc(dirs, func(d string) bool { r, err := filepath.EvalSymlinks(d); return err == nil && inTree(real, r) }) {
			return fmt.Errorf("it is outside the working directories (%s); an agent works in them", strings.Join(dirs, ", "))
		}
		return nil
	}
	pw, pro := s.sandbox.WritableFor(parentCwd, sandbox.Writing)
	cw, cro := s.sandbox.WritableFor(real, sandbox.Writing)
	for _, w := range cw {
		if !slices.ContainsFunc(pw, func(p string) bool { return inTree(w, p) }) {
			return fmt.Errorf("an agent there could write in %s, which its parent cannot; pick a directory inside %s", w, strings.Join(pw, ", "))
		}
	}
	for _, w := range cw {
		// A child writing inside a tree its parent's sandbox protects (a
		// cwd of .cohort/agents, or a link to it): the child's own policy,
		// computed from its cwd, knows nothing above it. Only a writable
		// tree the parent has inside that protected one (.cohort/worktrees)
		// may hold it.
		for _, r := range pro {
			carved := slices.ContainsFunc(pw, func(p string) bool { return p != r && inTree(p, r) && inTree(w, p) })
			if w != r && inTree(w, r) && !carved {
				return fmt.Errorf("an agent there could change %s, inside %s, which is protected; pick a directory outside it", w, r)
			}
		}
	}
	if err := s.checkHookScripts(real, pw, pro); err != nil {
		return err
	}
	for _, r := range pro {
		inChild := slices.ContainsFunc(cw, func(w string) bool { return inTree(r, w) })
		kept := slices.ContainsFunc(cro, func(c string) bool { return inTree(r, c) })
		if inChild && !kept {
			return fmt.Errorf("an agent there could change %s, which is protected; pick a directory that does not hold it at its top", r)
		}
	}
	return nil
}

// checkHookScripts refuses a cwd from which a configured hook would run a
// script its parent may write. A command hook runs in the agent's cwd, so
// a relative script (scripts/hook.sh) names another file from a child's
// cwd; the scripts the sandbox protects were resolved from the session's
// cwd only, and the parent may have written the child's copy already.
//
// Every hook that can run in the child's cwd counts: the settings' and
// those of every agent definition (their frontmatter hooks run in the
// agent's cwd too, and the child, or an agent it starts there, may be of
// any type).
func (s *Session) checkHookScripts(cwd string, pw, pro []string) error {
	protected := s.hookScripts()
	for _, sp := range s.hookScriptsFrom(cwd) {
		if slices.Contains(protected, sp) || slices.ContainsFunc(pro, func(r string) bool { return inTree(sp, r) }) {
			continue
		}
		if slices.ContainsFunc(pw, func(p string) bool { return inTree(sp, p) }) {
			return fmt.Errorf("a hook runs %s from there (hooks run in the agent's cwd), a file its parent may write; pick a directory where the hooks' scripts are the protected ones", sp)
		}
	}
	return nil
}

// inTree reports whether path is dir or inside it.
func inTree(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// heldCwds are the children's working directories a session holds, let
// go when it closes.
type heldCwds struct {
	mu   sync.Mutex
	dirs []*heldir.Dir
}

func (h *heldCwds) add(d *heldir.Dir) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dirs = append(h.dirs, d)
}

func (h *heldCwds) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, d := range h.dirs {
		d.Release()
	}
	h.dirs = nil
}
