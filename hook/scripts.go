package hook

import (
	"os"
	"path/filepath"
	"slices"
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
	add := func(p string) {
		for _, base := range []string{projectDir, cwd} {
			if base == "" && !filepath.IsAbs(p) {
				continue
			}
			abs := filepath.Clean(p)
			if !filepath.IsAbs(abs) {
				abs = filepath.Join(base, p)
			}
			seen[abs] = true
			if real, err := filepath.EvalSymlinks(abs); err == nil {
				seen[real] = true
			}
		}
	}
	for _, cmds := range s.byEvent {
		for _, c := range cmds {
			for _, p := range scriptWords(c.Cmd, projectDir) {
				add(p)
			}
		}
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
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
				if w.Static() && !strings.HasPrefix(w.Value, "-") {
					out = append(out, w.Value)
					break
				}
			}
		}
	}
	return out
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
