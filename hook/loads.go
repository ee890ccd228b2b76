package hook

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/shellcmd"
)

// A program the user lets run outside the sandbox ("sandbox": false on a
// command hook, a stdio MCP server or the statusLine, in a file agents
// cannot write) runs with the user's rights whatever it loads. Cohort
// keeps one invariant for such a program (Judge):
//
//	everything it may load from a tree agents write is read-only to them,
//	or it does not run unconfined.
//
// What it may load is read from its command line by the shell parser the
// permission analysis uses (shellcmd), bodies of sh -c and bash -c and
// their cd's included, and then from the files that line names:
//
//   - Every word that names an existing path (the program, a script, an
//     option's argument such as python -X's, node -r's or make -f's, the
//     value of --opt=path, a cd target, make -C's directory), each
//     relative word taken in every directory the command may run in, and
//     every quoted path in inline code (python -c, node -e), is a load
//     root: a file with its folder's whole tree (what a script imports
//     beside it), a directory with its tree (a program run from it can
//     load anything there).
//   - Search paths the entry's own environment sets (PYTHONPATH,
//     NODE_PATH, PERL5LIB, RUBYLIB) are load roots too.
//   - The working directory is a load root of a program that searches it:
//     python -c, python -m and python reading standard input (sys.path[0]
//     is the working directory) unless -P, -I or PYTHONSAFEPATH says not
//     to; node -e that requires or imports anything, and node -r or
//     --import naming a package (resolved from the working directory's
//     node_modules); make without -f (its Makefile); package managers,
//     build tools and test runners (cwdLoaders: npm, npx, uv, cargo, go,
//     pytest, …), which read the project they run in.
//   - For a node script, every node_modules folder between its folder and
//     the writable root above it, where one exists (require('pkg') walks
//     up to them).
//   - The files of each root's tree (at most maxScanFiles, each up to
//     maxScanBytes; installed-package and cache folders skipped) are read
//     for code that reaches outside the tree: a string that starts with
//     "..", os.pardir, .parent.parent, dirname(dirname(…)), or a writable
//     root's own path.
//
// A root inside a writable tree is protected (read-only in the sandbox and
// to the file tools, with its parents bound so it cannot be renamed) when
// it lies strictly below the writable root. It cannot be when it is a
// writable root itself (the project's top folder: protecting it would
// stop the session's work), and then, as when a tree reaches
// outside itself, a cd goes where the parser cannot tell, or the tree is
// too big to read, the program runs in the sandbox instead, and the user
// is told which entry, why, and what to change (Verdict.Refusal). Cohort
// does not change the program's environment or working directory to make
// it safe: hooks run in the project as Claude Code's do, and relative
// paths in users' commands depend on it.
//
// Limits, stated in each unconfined entry's start-up notice ("on files
// the model may have written"): a program's code can still compute a path
// the scan does not recognise, read a file whose name arrives at run
// time, load a node package from a node_modules folder that does not
// exist yet above its own, or, from a folder above a writable root (the
// home), import that root's files by package name; the folder itself is
// not protected (agents cannot write its own entries). Python older than
// 3.11 ignores PYTHONSAFEPATH (and stops at -P as an unknown option): the
// judgement trusts the variable.

// cwdLoaders are programs that load code or configuration from the
// directory they run in whatever their arguments say: package managers'
// scripts and local binaries (npm run, npx, uv run), build tools and
// test runners reading the project's files.
var cwdLoaders = map[string]bool{
	"npm": true, "npx": true, "pnpm": true, "pnpx": true, "yarn": true, "uv": true, "uvx": true, "poetry": true, "pipenv": true,
	"pdm": true, "hatch": true, "tox": true, "nox": true, "pytest": true, "cargo": true, "go": true, "gradle": true, "mvn": true,
	"rake": true, "bundle": true, "composer": true, "just": true, "task": true, "ninja": true, "cmake": true,
}

// maxScanFiles and maxScanBytes bound the scan of a load root's tree: a
// tree with more files is not judged and its program runs confined.
const (
	maxScanFiles = 400
	maxScanBytes = 512 << 10
)

// skipDirs are folders of installed packages and caches, not scanned for
// outward references (the packages' own code resolves within them).
var skipDirs = map[string]bool{"node_modules": true, "__pycache__": true, ".git": true, ".venv": true, "venv": true, "site-packages": true}

// Verdict is Judge's answer for one unconfined program.
type Verdict struct {
	// Protect are the paths to keep read-only to agents, in
	// Config.Protected's form: a file stands for its folder's tree.
	Protect []string
	// Refusal, when set, says why the program must run in the sandbox
	// instead, and what the user can change; "" when it may run
	// unconfined.
	Refusal string
}

// Judge applies the invariant (above) to cmd, a program that would run
// unconfined in cwd with env (its own entries: NAME=value), where
// projectDir stands for $CLAUDE_PROJECT_DIR and writable are the roots
// agents write (absolute). Paths outside every writable root are not its
// concern.
func Judge(cmd string, env []string, projectDir, cwd string, writable []string) Verdict {
	l := loadsOf(cmd, env, projectDir, cwd)
	var v Verdict
	var why []string
	roots := realAll(writable)
	why = append(why, l.unknown...)
	var trees []string
	add := func(tree string, asFile string) {
		real, err := filepath.EvalSymlinks(tree)
		if err != nil {
			return
		}
		under := slices.ContainsFunc(roots, func(w string) bool { return within(real, w) || real == w })
		holds := slices.Contains(roots, real)
		switch {
		case holds:
			why = append(why, fmt.Sprintf("it loads from %s, a folder agents write that Cohort cannot keep read-only", tree))
		case under:
			if !slices.Contains(trees, real) {
				trees = append(trees, real)
				v.Protect = append(v.Protect, asFile)
			}
		}
	}
	for _, f := range l.files {
		add(filepath.Dir(f), f)
	}
	for _, d := range l.dirs {
		add(d, filepath.Join(d, treeMark))
	}
	for _, t := range trees {
		if skipDirs[filepath.Base(t)] {
			continue // installed packages: their code resolves within them
		}
		if r := reachesOut(t, roots); r != "" {
			why = append(why, r)
		}
	}
	if len(why) > 0 {
		v.Protect = nil
		v.Refusal = strings.Join(dedup(why), "; ")
	}
	return v
}

// treeMark names no file: Protect lists a directory's tree as this child
// of it, since a protected path stands for its folder.
const treeMark = ".cohort-protected-tree"

// loads is what a command line names (loadsOf).
type loads struct {
	files, dirs []string // existing paths, absolute
	unknown     []string // reasons the line cannot be followed
}

// loadsOf reads cmd (see the invariant above).
func loadsOf(cmd string, env []string, projectDir, cwd string) loads {
	for _, v := range []string{"CLAUDE_PROJECT_DIR", "COHORT_PROJECT_DIR"} {
		for _, form := range []string{`"$` + v + `"`, `"${` + v + `}"`, "${" + v + "}", "$" + v} {
			cmd = strings.ReplaceAll(cmd, form, shellQuote(projectDir))
		}
	}
	var out loads
	path := func(word string, dirs []string) {
		for _, d := range dirs {
			p := word
			if !filepath.IsAbs(p) {
				if d == "" {
					continue
				}
				p = filepath.Join(d, p)
			}
			switch st, err := os.Stat(p); {
			case err != nil:
			case st.IsDir():
				out.dirs = append(out.dirs, filepath.Clean(p))
			default:
				out.files = append(out.files, filepath.Clean(p))
			}
		}
	}
	safe := false
	for _, kv := range env {
		k, val, _ := strings.Cut(kv, "=")
		switch k {
		case "PYTHONPATH", "NODE_PATH", "PERL5LIB", "RUBYLIB":
			for _, p := range filepath.SplitList(val) {
				path(p, []string{cwd})
			}
		case "PYTHONSAFEPATH":
			safe = val != ""
		}
	}
	starts := dedup([]string{cwd, projectDir})
	for _, start := range starts {
		an := shellcmd.Analyze(cmd, shellcmd.Options{Dir: start, Home: os.Getenv("HOME"), ScriptArgs: true})
		if !an.Understood() {
			out.unknown = append(out.unknown, "Cohort cannot read its command line whole")
		}
		for _, c := range an.Commands {
			dirs := c.Dirs
			if slices.Contains(dirs, "") {
				out.unknown = append(out.unknown, fmt.Sprintf("%q runs in a directory Cohort cannot tell", c.Source()))
			}
			for _, l := range c.Layers {
				words := l.Words
				for _, w := range words {
					if !w.Static() {
						continue
					}
					path(w.Value, dirs)
					if _, val, ok := strings.Cut(w.Value, "="); ok && strings.HasPrefix(w.Value, "-") {
						path(val, dirs)
					}
				}
				name := filepath.Base(words[0].Value)
				if !words[0].Static() {
					continue
				}
				switch {
				case strings.HasPrefix(name, "python"):
					python(&out, words[1:], dirs, safe, path)
				case name == "node" || name == "bun" || name == "deno":
					node(&out, words[1:], dirs, path)
				case cwdLoaders[name]:
					out.dirs = append(out.dirs, nonEmpty(dirs)...)
				case name == "make" || name == "gmake":
					if !slices.ContainsFunc(words[1:], func(w shellcmd.Word) bool {
						return w.Is("-f") || w.Is("--file") || w.Static() && (strings.HasPrefix(w.Value, "--file=") || strings.HasPrefix(w.Value, "--makefile="))
					}) && !slices.ContainsFunc(words[1:], func(w shellcmd.Word) bool { return w.Is("-C") || w.Is("--directory") }) {
						out.dirs = append(out.dirs, nonEmpty(dirs)...)
					}
				}
			}
		}
	}
	for _, f := range out.files {
		if strings.HasSuffix(f, ".js") || strings.HasSuffix(f, ".mjs") || strings.HasSuffix(f, ".cjs") || strings.HasSuffix(f, ".ts") {
			for d := filepath.Dir(f); d != filepath.Dir(d); d = filepath.Dir(d) {
				if st, err := os.Stat(filepath.Join(d, "node_modules")); err == nil && st.IsDir() {
					out.dirs = append(out.dirs, filepath.Join(d, "node_modules"))
				}
			}
		}
	}
	out.files, out.dirs, out.unknown = dedup(out.files), dedup(out.dirs), dedup(out.unknown)
	return out
}

// python adds what python's arguments load: a script (by path, already
// added) or, for -c, -m and standard input, the working directory unless
// -P, -I or PYTHONSAFEPATH; and quoted paths in -c code.
func python(out *loads, args []shellcmd.Word, dirs []string, safe bool, path func(string, []string)) {
	inline := true
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.Static() {
			inline = false
			break
		}
		v := w.Value
		if v == "-X" || v == "-W" || v == "--check-hash-based-pycs" {
			i++
			continue
		}
		if !strings.HasPrefix(v, "-") || v == "-" {
			inline = v == "-"
			break
		}
		if !strings.HasPrefix(v, "--") {
			if strings.ContainsAny(v, "PI") {
				safe = true
			}
			if strings.HasSuffix(v, "c") && i+1 < len(args) {
				if args[i+1].Static() {
					quotedPaths(args[i+1].Value, dirs, path)
				}
				break
			}
			if strings.HasSuffix(v, "m") {
				break
			}
		}
	}
	if inline && !safe {
		out.dirs = append(out.dirs, nonEmpty(dirs)...)
	}
}

// node adds what node's arguments load from the working directory:
// inline code that requires or imports, a preload named as a package.
func node(out *loads, args []shellcmd.Word, dirs []string, path func(string, []string)) {
	for i := 0; i < len(args); i++ {
		v := args[i].Value
		if !args[i].Static() || !strings.HasPrefix(v, "-") {
			return
		}
		if i+1 >= len(args) || !args[i+1].Static() {
			continue
		}
		next := args[i+1].Value
		switch v {
		case "-e", "--eval", "-p", "--print":
			quotedPaths(next, dirs, path)
			if strings.Contains(next, "require") || strings.Contains(next, "import") {
				out.dirs = append(out.dirs, nonEmpty(dirs)...)
			}
			return
		case "-r", "--require", "--import", "--loader", "--experimental-loader":
			if !strings.HasPrefix(next, ".") && !filepath.IsAbs(next) && !strings.HasPrefix(next, "node:") {
				out.dirs = append(out.dirs, nonEmpty(dirs)...)
			}
			i++
		}
	}
}

// quoted are the quoted strings of inline code.
var quoted = regexp.MustCompile(`'([^'\n]*)'|"([^"\n]*)"`)

// quotedPaths adds the quoted strings of code that name paths.
func quotedPaths(code string, dirs []string, path func(string, []string)) {
	for _, m := range quoted.FindAllStringSubmatch(code, -1) {
		s := m[1] + m[2]
		if s != "" && (strings.Contains(s, "/") || s == "." || s == "..") {
			path(s, dirs)
		}
	}
}

// outward are code that names a path outside its own folder.
var outward = regexp.MustCompile(`['"` + "`" + `]\.\.(['"` + "`" + `/\\]|$)|os\.pardir|\.parent\.parent|dirname\(\s*(os\.)?(path\.)?dirname|\.parents\[`)

// reachesOut reads the files of tree for code that reaches outside it
// (see the invariant); "" when none does.
func reachesOut(tree string, roots []string) string {
	n, found := 0, ""
	err := filepath.WalkDir(tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != tree && skipDirs[d.Name()] {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if n++; n > maxScanFiles {
			return fmt.Errorf("more than %d files", maxScanFiles)
		}
		info, err := d.Info()
		if err != nil || info.Size() > maxScanBytes {
			return nil // data, not code a program imports
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if loc := outward.FindIndex(data); loc != nil {
			found = fmt.Sprintf("%s names a path outside %s (%q)", p, tree, data[loc[0]:loc[1]])
			return filepath.SkipAll
		}
		for _, w := range roots {
			if strings.Contains(string(data), w) && !strings.Contains(string(data), tree) {
				found = fmt.Sprintf("%s names %s, a folder agents write", p, w)
				return filepath.SkipAll
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Sprintf("Cohort cannot read all of %s (%v)", tree, err)
	}
	return found
}

func realAll(paths []string) []string {
	var out []string
	for _, p := range paths {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			out = append(out, r)
		} else if filepath.IsAbs(p) {
			out = append(out, filepath.Clean(p))
		}
	}
	return dedup(out)
}

func nonEmpty(list []string) []string {
	return slices.DeleteFunc(slices.Clone(list), func(s string) bool { return s == "" })
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
