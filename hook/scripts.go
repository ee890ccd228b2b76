package hook

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cohort-dev/cohort/shellcmd"
)

// interpreters run the script named by their first argument that is not
// an option ("python3 hooks/check.py", "bash -e check.sh").
var interpreters = map[string]bool{
	"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "python": true, "python3": true,
	"node": true, "deno": true, "bun": true, "ruby": true, "perl": true, "php": true, "lua": true,
	"pwsh": true, "tsx": true, "ts-node": true,
}

// codeOptions are the interpreters' options after which no script file
// follows: the program is given inline (python -c, bash -c, node -e,
// perl -e, ruby -e, --eval) or named as a module (python -m pytest).
var codeOptions = map[string]bool{"-c": true, "-m": true, "-e": true, "-E": true, "--eval": true, "-p": true, "--print": true}

// Scripts lists the files the configured commands execute: the program of
// each command when it is given as a path, and the script an interpreter
// runs. $CLAUDE_PROJECT_DIR and $COHORT_PROJECT_DIR stand for projectDir;
// other relative paths are taken against both projectDir and cwd (a hook
// runs in the agent's cwd). The paths are absolute, cleaned and sorted,
// with symlinks resolved where they exist. Such files are protected: an
// agent that could rewrite one would run code outside every check the
// next time the hook fires.
func (s *Set) Scripts(projectDir, cwd string) []string {
	if s == nil {
		return nil
	}
	seen := map[string]bool{}
	for _, cmds := range s.byEvent {
		for _, c := range cmds {
			addScripts(seen, c.Cmd, projectDir, cwd, false)
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// ScriptsOf is Scripts for one command line that is not a hook's: the
// settings' statusLine command, or a stdio MCP server's program and
// arguments (quoted as one line with CommandLine). Cohort protects them
// as it protects hook scripts.
//
// Unlike Scripts, it also protects the files of a module that Python runs
// with -m from the project (moduleFiles): these programs run outside the
// sandbox when their "sandbox": false is honoured. A hook's module is
// left writable, as its other imports are: a hook runs confined unless it
// opts out, and an opted-out hook's imports are the cost its start-up
// notice states.
func ScriptsOf(cmd, projectDir, cwd string) []string {
	seen := map[string]bool{}
	addScripts(seen, cmd, projectDir, cwd, true)
	return slices.Sorted(maps.Keys(seen))
}

// CommandLine quotes a program and its arguments as one shell command
// line, for ScriptsOf.
func CommandLine(program string, args ...string) string {
	words := []string{shellQuote(program)}
	for _, a := range args {
		words = append(words, shellQuote(a))
	}
	return strings.Join(words, " ")
}

// addScripts adds to seen the files cmd executes (see Scripts), and with
// modules the files of the modules Python runs with -m (moduleFiles) that
// exist in the project or cwd: an installed module (python -m pytest) is
// no file of the project, and is never reported missing.
func addScripts(seen map[string]bool, cmd, projectDir, cwd string, modules bool) {
	if modules {
		for _, m := range moduleFiles(cmd, projectDir) {
			for _, abs := range candidates(m, projectDir, cwd) {
				if real, err := filepath.EvalSymlinks(abs); err == nil {
					seen[abs], seen[real] = true, true
				}
			}
		}
	}
	for _, p := range scriptWords(cmd, projectDir) {
		for _, abs := range candidates(p, projectDir, cwd) {
			seen[abs] = true
			if real, err := filepath.EvalSymlinks(abs); err == nil {
				seen[real] = true
			}
		}
	}
}

// candidates are the absolute paths a script word may name: itself when
// absolute, else against projectDir and against cwd.
func candidates(p, projectDir, cwd string) []string {
	if filepath.IsAbs(p) {
		return []string{filepath.Clean(p)}
	}
	var out []string
	for _, base := range []string{projectDir, cwd} {
		if base != "" && !slices.Contains(out, filepath.Join(base, p)) {
			out = append(out, filepath.Join(base, p))
		}
	}
	return out
}

// Missing is a configured command whose script did not exist when it was
// looked for: Script as written, Paths where it was looked for.
type Missing struct {
	Command *Command
	Script  string
	Paths   []string
}

// String reports it for the user: the file and line, and what to do.
func (m Missing) String() string {
	where := m.Command.Source
	if m.Command.Line > 0 {
		where += ":" + strconv.Itoa(m.Command.Line)
	}
	return fmt.Sprintf("%s: the %s hook %q runs %s, which does not exist (looked for %s); create it, or fix the hook, and start a new session: a script that appears during this session is not run", where, m.Command.Event, m.Command.Cmd, m.Script, strings.Join(m.Paths, " and "))
}

// MissingScripts lists the commands whose scripts (see Scripts) exist
// nowhere they are looked for. A Runner given them (Config.Missing) does
// not run a script that appears later: a command may have written it.
func (s *Set) MissingScripts(projectDir, cwd string) []Missing {
	if s == nil {
		return nil
	}
	var out []Missing
	for _, ev := range slices.Sorted(maps.Keys(s.byEvent)) {
		for _, c := range s.byEvent[ev] {
			for _, p := range scriptWords(c.Cmd, projectDir) {
				paths := candidates(p, projectDir, cwd)
				if !slices.ContainsFunc(paths, exists) {
					out = append(out, Missing{Command: c, Script: p, Paths: paths})
				}
			}
		}
	}
	return out
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// scriptWords returns the path-like words of a hook command that name
// files it executes.
func scriptWords(cmd, projectDir string) []string {
	for _, v := range []string{"CLAUDE_PROJECT_DIR", "COHORT_PROJECT_DIR"} {
		for _, form := range []string{`"$` + v + `"`, `"${` + v + `}"`, "${" + v + "}", "$" + v} {
			cmd = strings.ReplaceAll(cmd, form, shellQuote(projectDir))
		}
	}
	an := shellcmd.Analyze(cmd, shellcmd.Options{Dir: projectDir, Home: os.Getenv("HOME")})
	var out []string
	for _, c := range an.Commands {
		for _, l := range c.Layers {
			name := l.Name()
			if !name.Static() {
				continue
			}
			if strings.Contains(name.Value, "/") {
				out = append(out, name.Value)
			}
			if !interpreters[filepath.Base(name.Value)] {
				continue
			}
			for _, w := range l.Words[1:] {
				if w.Static() && codeOptions[w.Value] {
					break // the program is an argument or a module, not a file
				}
				if w.Static() && !strings.HasPrefix(w.Value, "-") {
					out = append(out, w.Value)
					break
				}
			}
		}
	}
	return out
}

// moduleFiles are the files `python -m a.b.c` runs when the module lies
// in the working directory, which Python searches first: a/b/c.py and
// its package's a/__init__.py (protecting them protects their folder).
// Other interpreters take no module option that names project files.
func moduleFiles(cmd, projectDir string) []string {
	an := shellcmd.Analyze(cmd, shellcmd.Options{Dir: projectDir, Home: os.Getenv("HOME")})
	var out []string
	for _, c := range an.Commands {
		for _, l := range c.Layers {
			name := l.Name()
			if !name.Static() || !strings.HasPrefix(filepath.Base(name.Value), "python") {
				continue
			}
			for i, w := range l.Words[1:] {
				if !w.Static() || w.Value != "-m" || i+2 >= len(l.Words) || !l.Words[i+2].Static() {
					continue
				}
				parts := strings.Split(l.Words[i+2].Value, ".")
				if slices.Contains(parts, "") || slices.ContainsFunc(parts, func(p string) bool { return strings.ContainsAny(p, `/\`) }) {
					break
				}
				out = append(out, filepath.Join(parts...)+".py")
				if len(parts) > 1 {
					out = append(out, filepath.Join(parts[0], "__init__.py"))
				}
				break
			}
		}
	}
	return out
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
