package hook

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/shellcmd"
)

// targetVars are the variables a hook's output target may name and still
// be literal: their values are known before the hook runs and no model
// sets them.
var targetVars = []string{"HOME", "CLAUDE_PROJECT_DIR", "COHORT_PROJECT_DIR"}

// OutputTargets lists the files c's command text names as where it
// writes: a redirection's target (>, >>, &>, >|, 2>, ...) or a file
// argument of tee, as absolute paths, each once. Only a literal target
// counts ("~", $HOME, ${HOME} and $CLAUDE_PROJECT_DIR expanded to home
// and project); one that depends on anything known only at run time (a
// command substitution, another variable, a glob, a cd to somewhere
// unknown) is left out, and so is every target when the command sets one
// of those variables itself. See "The sandbox" in the package doc.
func (c *Command) OutputTargets(home, project, cwd string) []string {
	if c.Type != TypeCommand || c.Cmd == "" {
		return nil
	}
	vars := map[string]string{"HOME": home, "CLAUDE_PROJECT_DIR": project, "COHORT_PROJECT_DIR": project}
	an := shellcmd.Analyze(c.Cmd, shellcmd.Options{Dir: cwd, Home: home, Vars: vars})
	for _, as := range an.Assigns {
		if slices.Contains(targetVars, as.Name) {
			return nil
		}
	}
	var out []string
	add := func(w shellcmd.Word, dirs []string) {
		if w.Dynamic || w.Glob || w.Value == "" {
			return
		}
		for _, d := range dirs {
			p := w.Value
			if !filepath.IsAbs(p) {
				if d == "" || len(dirs) > 1 {
					return // it may land in a directory known only at run time
				}
				p = filepath.Join(d, p)
			}
			if p = filepath.Clean(p); !slices.Contains(out, p) && !strings.HasPrefix(p, "/dev/") && !strings.HasPrefix(p, "/proc/") {
				out = append(out, p)
			}
		}
	}
	for _, r := range an.Redirects {
		if r.Write {
			add(r.Target, r.Dirs)
		}
	}
	for _, cmd := range an.Commands {
		prog := cmd.Program()
		if name := prog.Name(); name.Dynamic || filepath.Base(name.Value) != "tee" || !shellcmd.PlainName(name.Value) {
			continue
		}
		opts := true
		for _, w := range prog.Words[1:] {
			switch {
			case opts && w.Static() && w.Value == "--":
				opts = false
			case opts && w.Static() && strings.HasPrefix(w.Value, "-") && w.Value != "-":
			default:
				add(w, cmd.Dirs)
			}
		}
	}
	return out
}

// Grants are what the sandbox does with the files confined hooks name as
// their output (Sandbox.Grant).
type Grants interface {
	// Grantable says why the sandbox would not make path, a file a
	// hook's command names as its output, writable for that hook's
	// process tree (nil if it would). It makes nothing: the file is made
	// when the hook runs.
	Grantable(cwd, path string) error
}

// OutputNotices are what the user is told once, at the start of a session
// with a sandbox, about the output files of confined hooks that the
// sandbox will not let them write: one line per file, naming the settings
// file, the hook and the path.
func (s *Set) OutputNotices(g Grants, home, project, cwd string) []string {
	var out []string
	for _, c := range s.commands(func(c *Command) bool { return !c.Unsandboxed }) {
		for _, p := range c.OutputTargets(home, project, cwd) {
			if err := g.Grantable(cwd, p); err != nil {
				out = append(out, fmt.Sprintf("the %s hook %q%s writes %s, which the sandbox does not let hooks write (%v): it runs without it", c.Event, c.Cmd, c.configuredAt(), p, err))
			}
		}
	}
	return out
}
