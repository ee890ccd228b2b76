package hook

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/shellcmd"
)

// A program the user lets run outside the sandbox ("sandbox": false on a
// command hook, a stdio MCP server or the statusLine, in a file agents
// cannot write; the --permission-prompt-command program) runs with the
// user's rights whatever it loads, or decides what agents may do. Cohort
// does not try to follow what its code computes: no reading of a
// script's tree can tell every path a program will reach. It runs
// unconfined only when two things hold, whatever its code computes
// (Judge):
//
//  1. Nothing it is started with lies in a tree agents write (their
//     writable roots, protected folders inside them included: a script
//     there can compute its way to the rest of the tree, so protection
//     does not make it safe):
//     - the program as the PATH it will get resolves it, its real file
//     too, and a script's #! interpreter (#!/usr/bin/env X resolved
//     through that PATH);
//     - every path its command line names: the script an interpreter runs
//     (whether it exists yet or not), every word that names an existing
//     path or is written as one (/x, ./x, ../x, ~/x), the value of
//     --opt=path and of an attached -I/path, quoted paths in inline code,
//     cd targets, make -C's directory, the bodies of sh -c read by the
//     shell parser the permission analysis uses (shellcmd);
//     - the search-path and preload variables it will get, from its own
//     env and inherited from Cohort's (preloadVars): PATH, PYTHONPATH,
//     NODE_PATH, NODE_OPTIONS, PERL5LIB, BASH_ENV, LD_PRELOAD, … A value
//     that names a path in a writable tree confines it; so does NODE_OPTIONS
//     preloading a package (resolved from the working directory) and
//     RUBYGEMS_GEMDEPS (a Gemfile found from it). A relative entry counts
//     as the working directory's.
//  2. Its shape is one Cohort knows does not load code from its working
//     directory (an allow-list, so a program it does not know runs
//     confined instead of escaping): an interpreter running a script file
//     with options known safe (python with a script, whose sys.path[0] is
//     the script's folder, or -c/-m only with -P, -I or PYTHONSAFEPATH;
//     node with a script and none of --test, --watch, -r, --import, -e …;
//     sh, bash, zsh with a script or -c; perl and ruby with a script), or a
//     program that reads no code or executable configuration from the
//     directory it runs in (plainPrograms). Anything else runs confined
//     when its working directory lies in a writable tree, which is where
//     hooks and servers run: npm, npx, uv, make, git, pytest, a linter, node
//     --test and python -c are not on the list.
//
// A word only known at run time ($X other than $HOME and
// $CLAUDE_PROJECT_DIR, $(…)), a cd whose target cannot be told, a wrapper
// with options the parser does not know, or a line it cannot read whole
// confines the program too.
//
// What a program outside the writable trees computes at run time (a
// script's source "$CLAUDE_PROJECT_DIR/lib.sh", a python script's
// load_dotenv() or require('bundler/setup')) is the user's own code and
// the user's stated opt-out: Cohort cannot see it and does not claim to,
// and the start-up notice of every unconfined entry says so. Perl older
// than 5.26 searches "." for modules, and Python older than 3.11 ignores
// -P and PYTHONSAFEPATH: the judgement trusts the interpreter's current
// behaviour.
//
// Since nothing an unconfined program is started with lies where agents
// write, the judgement protects nothing: a program it refuses runs in
// the sandbox (the writing profile, as any confined hook) and the user is
// told which entry, why, and what to change (Verdict.Refusal). Cohort does
// not change the program's environment or working directory to make it
// safe: hooks run in the project as Claude Code's do.

// Program is one program the user lets run unconfined, as Judge reads it.
type Program struct {
	// Line is its shell command line (CommandLine for an argument list).
	Line string
	// Env is the whole environment it gets, in order (Cohort's own, then
	// the settings', then its entry's): a later NAME=value wins.
	Env []string
	// ProjectDir stands for $CLAUDE_PROJECT_DIR; Dir is the working
	// directory it starts in.
	ProjectDir, Dir string
	// Writable are the roots agents write, absolute.
	Writable []string
}

// Verdict is Judge's answer for one unconfined program.
type Verdict struct {
	// Refusal, when set, says why the program must run in the sandbox
	// instead; "" when it may run unconfined.
	Refusal string
}

// Judge applies the rule above to p.
func Judge(p Program) Verdict {
	j := &judgement{p: p, roots: realAll(p.Writable), env: map[string]string{}}
	for _, kv := range p.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			j.env[k] = v
		}
	}
	j.environment(j.env, p.Dir)
	j.line()
	return Verdict{Refusal: strings.Join(dedup(j.why), "; ")}
}

// judgement gathers the reasons one program must run confined.
type judgement struct {
	p     Program
	roots []string
	env   map[string]string
	why   []string
}

func (j *judgement) refuse(format string, args ...any) {
	j.why = append(j.why, fmt.Sprintf(format, args...))
}

// writable returns the writable root path lies in ("" for none), the
// path taken as written and with its links resolved.
func (j *judgement) writable(path string) string {
	if path == "" || !filepath.IsAbs(path) {
		return ""
	}
	for _, p := range dedup([]string{filepath.Clean(path), resolved(path)}) {
		for _, w := range j.roots {
			if p == w || within(p, w) {
				return w
			}
		}
	}
	return ""
}

// resolved is path with the links of its longest existing ancestor
// resolved (the rest, which may be made later, appended as written).
func resolved(path string) string {
	rest := ""
	for p := filepath.Clean(path); ; p = filepath.Dir(p) {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		if p == filepath.Dir(p) {
			return filepath.Clean(path)
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

// named refuses path (absolute, or relative to dir) in a writable tree,
// as what for the message.
func (j *judgement) named(path, dir, what string) {
	if strings.HasPrefix(path, "~/") {
		path = filepath.Join(j.env["HOME"], path[2:])
	}
	if !filepath.IsAbs(path) {
		if dir == "" {
			return
		}
		path = filepath.Join(dir, path)
	}
	if w := j.writable(path); w != "" {
		j.refuse("%s %s, in %s (a tree agents write)", what, path, w)
	}
}

// preloadVars are the variables that make a program load code from a
// path: each value naming a path in a writable tree confines. listVars
// hold path lists; the others hold options or one path.
var (
	listVars    = []string{"PATH", "PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONPYCACHEPREFIX", "NODE_PATH", "PERL5LIB", "PERLLIB", "RUBYLIB", "LD_LIBRARY_PATH", "DYLD_LIBRARY_PATH", "DYLD_FRAMEWORK_PATH", "VIRTUAL_ENV", "ZDOTDIR", "GEM_PATH", "GEM_HOME"}
	optionVars  = []string{"PYTHONSTARTUP", "NODE_OPTIONS", "PERL5OPT", "RUBYOPT", "BASH_ENV", "ENV", "LD_PRELOAD", "DYLD_INSERT_LIBRARIES", "LD_AUDIT"}
	nodePreload = regexp.MustCompile(`(^|\s)(-r|--require|--import|--loader|--experimental-loader)(\s|=)+([^\s.\/][^\s]*)`)
)

// environment refuses preload variables of env naming writable trees
// (relative entries taken in dir).
func (j *judgement) environment(env map[string]string, dir string) {
	for _, k := range listVars {
		v, ok := env[k]
		if !ok {
			continue
		}
		for _, p := range filepath.SplitList(v) {
			if p == "" {
				p = "."
			}
			j.named(p, dir, "$"+k+" names")
		}
	}
	for _, k := range optionVars {
		v := env[k]
		for _, f := range strings.Fields(v) {
			if _, val, ok := strings.Cut(f, "="); ok && strings.HasPrefix(f, "-") {
				f = val
			} else if len(f) > 2 && f[0] == '-' && f[1] != '-' {
				f = f[2:] // -I/path, -r./x
			}
			if looksLikePath(f) || k == "LD_PRELOAD" || k == "DYLD_INSERT_LIBRARIES" || k == "BASH_ENV" || k == "ENV" || k == "PYTHONSTARTUP" || k == "LD_AUDIT" {
				j.named(f, dir, "$"+k+" names")
			}
		}
	}
	if m := nodePreload.FindStringSubmatch(env["NODE_OPTIONS"]); m != nil && !strings.HasPrefix(m[4], "node:") {
		j.refuse("$NODE_OPTIONS preloads %s, which node resolves from the working directory", m[4])
	}
	if v := env["RUBYGEMS_GEMDEPS"]; v != "" {
		j.refuse("$RUBYGEMS_GEMDEPS makes ruby load a Gemfile from the working directory")
	}
}

// looksLikePath reports a word written as a path.
func looksLikePath(s string) bool {
	return strings.HasPrefix(s, "/") || strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") || strings.HasPrefix(s, "~/") || s == "." || s == ".."
}

// line reads the command line in each directory it may start in.
func (j *judgement) line() {
	home := j.env["HOME"]
	vars := map[string]string{"CLAUDE_PROJECT_DIR": j.p.ProjectDir, "COHORT_PROJECT_DIR": j.p.ProjectDir, "HOME": home}
	for _, start := range dedup([]string{j.p.Dir, j.p.ProjectDir}) {
		an := shellcmd.Analyze(j.p.Line, shellcmd.Options{Dir: start, Home: home, ScriptArgs: true, Vars: vars})
		if !an.Understood() {
			j.refuse("Cohort cannot read its command line whole")
		}
		for _, a := range an.Assigns {
			if _, ok := vars[a.Name]; ok {
				j.refuse("its command line sets $%s", a.Name)
			}
			if !slices.Contains(listVars, a.Name) && !slices.Contains(optionVars, a.Name) && a.Name != "RUBYGEMS_GEMDEPS" {
				continue
			}
			for _, v := range a.Values {
				if !v.Static() {
					j.refuse("its command line sets $%s to a value only known at run time", a.Name)
					continue
				}
				for _, d := range a.Dirs {
					j.environment(map[string]string{a.Name: v.Value}, d)
				}
			}
		}
		for _, c := range an.Commands {
			j.command(c)
		}
	}
}

// command judges one simple command of the line.
func (j *judgement) command(c *shellcmd.Command) {
	if slices.Contains(c.Dirs, "") {
		j.refuse("%q runs in a directory Cohort cannot tell", c.Source())
		return
	}
	path := j.env["PATH"]
	for _, a := range c.Assigns {
		if a.Name == "PATH" && len(a.Values) == 1 {
			path = a.Values[0].Value
		}
	}
	for _, l := range c.Layers {
		for _, w := range l.Words {
			if !w.Static() {
				j.refuse("%q has a word only known at run time (%s)", c.Source(), w)
				return
			}
		}
		if l.Uncertain {
			j.refuse("%q runs a command under options Cohort does not know", c.Source())
			return
		}
		for _, dir := range c.Dirs {
			j.words(l.Words, dir)
			if c.Function {
				continue // a function of the line: its body's commands follow
			}
			name, args, interp, iargs, ok := j.program(l.Words, dir, path)
			if !ok || l.Transparent && !l.OpenArgs {
				continue // the layer inside is judged
			}
			why := j.shape(name, args, dir)
			if strings.HasSuffix(why, unknownProgram) && interp != "" {
				why = j.shape(interp, iargs, dir)
			}
			if why != "" {
				if w := j.writable(dir); w != "" {
					j.refuse("%s, and it runs in %s, a tree agents write", why, dir)
				}
			}
		}
	}
}

// words refuses every path the words name in a writable tree.
func (j *judgement) words(words []shellcmd.Word, dir string) {
	for _, w := range words {
		v := w.Value
		cands := []string{v}
		if _, val, ok := strings.Cut(v, "="); ok && strings.HasPrefix(v, "-") {
			cands = append(cands, val)
		} else if len(v) > 2 && v[0] == '-' && v[1] != '-' {
			cands = append(cands, v[2:])
		}
		for _, m := range quoted.FindAllStringSubmatch(v, -1) {
			cands = append(cands, m[1]+m[2])
		}
		for _, p := range cands {
			if p == "" {
				continue
			}
			if strings.Contains(p, "://") || p == "." || p == ".." {
				continue // a URL; a jq filter (a program's own cwd is its shape's concern)
			}
			if looksLikePath(p) || strings.Contains(p, "/") && !strings.ContainsAny(p, " \n\t'\";") {
				j.named(p, dir, "it names")
				continue
			}
			if _, err := os.Lstat(filepath.Join(dir, p)); err == nil && !strings.ContainsAny(p, "\n") {
				j.named(p, dir, "it names")
			}
		}
	}
}

// quoted are the quoted strings of inline code.
var quoted = regexp.MustCompile(`'([^'\n]*)'|"([^"\n]*)"`)

// program resolves a layer's program through path and refuses it, and a
// script's #! interpreter, in a writable tree. It returns the name and
// arguments whose shape decides and, for a script with a #! line, its
// interpreter's (the interpreter running the script), which decide when
// the name is no program Cohort knows. ok is false for a program that
// is not found (it does not run).
func (j *judgement) program(words []shellcmd.Word, dir, path string) (name string, args []string, interp string, iargs []string, ok bool) {
	for _, w := range words[1:] {
		args = append(args, w.Value)
	}
	name = words[0].Value
	file := lookPath(name, path, dir)
	if file == "" {
		return filepath.Base(name), args, "", nil, builtins[name]
	}
	j.named(file, dir, "its program")
	interp, iargs = shebang(file)
	if interp == "" {
		return filepath.Base(name), args, "", nil, true
	}
	j.named(interp, dir, "its #! interpreter")
	if filepath.Base(interp) == "env" {
		for len(iargs) > 0 && strings.HasPrefix(iargs[0], "-") {
			iargs = iargs[1:] // env -S: the rest is already split
		}
		if len(iargs) == 0 {
			return filepath.Base(name), args, "", nil, true
		}
		if interp = lookPath(iargs[0], path, dir); interp == "" {
			return filepath.Base(name), args, "", nil, true
		}
		j.named(interp, dir, "its #! interpreter")
		iargs = iargs[1:]
	}
	return filepath.Base(name), args, filepath.Base(interp), append(append(iargs, file), args...), true
}

// builtins are the shell's own commands the allow-list names.
var builtins = map[string]bool{"cd": true, "echo": true, "printf": true, "true": true, "false": true, ":": true, "exit": true,
	"test": true, "[": true, "source": true, ".": true, "export": true, "set": true, "return": true}

// lookPath finds name as the shell would: a name with a slash in dir, one
// without in path (an empty or relative entry taken in dir). "" when no
// executable file is found.
func lookPath(name, path, dir string) string {
	exe := func(p string) bool {
		st, err := os.Stat(p)
		return err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0
	}
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		if exe(name) {
			return filepath.Clean(name)
		}
		return ""
	}
	for _, d := range filepath.SplitList(path) {
		if !filepath.IsAbs(d) {
			d = filepath.Join(dir, d)
		}
		if p := filepath.Join(d, name); exe(p) {
			return p
		}
	}
	return ""
}

// shebang reads file's #! line: the interpreter and its arguments.
func shebang(file string) (string, []string) {
	f, err := os.Open(file)
	if err != nil {
		return "", nil
	}
	defer f.Close()
	buf := make([]byte, 256)
	n, _ := f.Read(buf)
	line, _, _ := strings.Cut(string(buf[:n]), "\n")
	rest, ok := strings.CutPrefix(line, "#!")
	if !ok {
		return "", nil
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return "", nil
	}
	return fields[0], fields[1:]
}

func realAll(paths []string) []string {
	var out []string
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			continue
		}
		out = append(out, filepath.Clean(p))
		if r, err := filepath.EvalSymlinks(p); err == nil {
			out = append(out, r)
		}
	}
	return dedup(out)
}

func dedup(list []string) []string {
	var out []string
	for _, s := range list {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// within reports whether path is strictly below dir.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
