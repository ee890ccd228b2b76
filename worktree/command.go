package worktree

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/shellcmd"
)

// commandCheck applies the guard's policy to one analysed command line and
// records the first reason to refuse it.
type commandCheck struct {
	g   *Guard
	err error
	// Per-check caches: a directory's CheckWrite verdict, whether it lies
	// inside the worktree, and operands already found harmless there.
	cwdErr map[string]error
	inside map[string]bool
	fine   map[[2]string]bool
}

// check vets a command line that starts in dir.
func (g *Guard) check(command, dir string) error {
	start := ""
	if filepath.IsAbs(dir) {
		start = filepath.Clean(dir)
	}
	an := shellcmd.Analyze(command, shellcmd.Options{Dir: start, Home: g.home, ScriptArgs: true})
	c := &commandCheck{g: g, cwdErr: map[string]error{}, inside: map[string]bool{}, fine: map[[2]string]bool{}}
	c.run(an)
	return c.err
}

func (c *commandCheck) refuse(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf(format, args...)
	}
}

// run refuses a line the analysis did not fully understand, then vets the
// variables that point git elsewhere, the output redirections and every
// command that is not read-only.
func (c *commandCheck) run(an *shellcmd.Analysis) {
	for _, n := range an.Notes {
		if n.Kind == shellcmd.Unknown {
			c.refuse("%s, so where it writes cannot be told", n.Reason)
			return
		}
	}
	for _, as := range an.Assigns {
		c.assign(as)
	}
	for _, r := range an.Redirects {
		c.redirect(r)
	}
	readOnly := permission.ReadOnlyCommands(an)
	for i, cmd := range an.Commands {
		if c.err != nil {
			return
		}
		if !readOnly[i] && !cmd.Function && !movesOnly(cmd) {
			c.vet(cmd)
		}
	}
}

// movesOnly reports a cd, pushd or popd: it writes nothing, and the
// analysis follows where it goes. (A function's call is not vetted either:
// its body is, where it is called.)
func movesOnly(cmd *shellcmd.Command) bool {
	switch cmd.Program().Name().Value {
	case "cd", "pushd", "popd":
		return true
	}
	return false
}

// gitPathVars are variables that send git to another repository or work
// tree: set to a path in the main checkout, a harmless-looking git commit
// would write there.
var gitPathVars = map[string]bool{"GIT_DIR": true, "GIT_WORK_TREE": true, "GIT_INDEX_FILE": true,
	"GIT_COMMON_DIR": true, "GIT_OBJECT_DIRECTORY": true, "GIT_ALTERNATE_OBJECT_DIRECTORIES": true}

// assign refuses git's location variables pointed at the protected area
// (or at a place only known at run time).
func (c *commandCheck) assign(as *shellcmd.Assignment) {
	if c.err != nil || !gitPathVars[as.Name] {
		return
	}
	for _, v := range as.Values {
		if v.Dynamic {
			c.refuse("%s is set to a value only known at run time", as.Name)
			return
		}
		c.vetOperand(as.Dirs, "setting "+as.Name, v.Value)
	}
}

// redirect vets an output redirection's target.
func (c *commandCheck) redirect(r *shellcmd.Redirect) {
	if c.err != nil || !r.Write {
		return
	}
	if r.Target.Dynamic {
		c.refuse("output is redirected to %s, a file only known at run time", r.Target)
		return
	}
	v := r.Target.Value
	if r.Target.Glob {
		v = globBase(v)
	}
	for _, cwd := range r.Dirs {
		p, ok := join(cwd, v)
		if !ok {
			c.refuse("output is redirected to %s in a directory only known at run time (after a cd to a variable or to -)", r.Target)
			return
		}
		if err := c.g.CheckWrite(p); err != nil {
			c.refuse("output is redirected to %s: %v", r.Target, trimSentinel(err))
			return
		}
	}
}

// vet checks one command that is not read-only: where it runs and every
// path the words of each of its layers, and the variables set for it, may
// name.
func (c *commandCheck) vet(cmd *shellcmd.Command) {
	show := short(cmd.Source())
	for _, cwd := range cmd.Dirs {
		if cwd == "" {
			c.refuse("`%s` may run in a directory only known at run time (after a cd to a variable or to -), and it is not a read-only command", show)
			return
		}
		err, seen := c.cwdErr[cwd]
		if !seen {
			err = c.g.CheckWrite(cwd)
			c.cwdErr[cwd] = err
		}
		if err != nil {
			c.refuse("`%s` would run in %s, inside the main checkout, and it is not a read-only command", show, cwd)
			return
		}
	}
	writes := writesFiles(cmd)
	what := "`" + show + "`"
	for _, l := range cmd.Layers {
		for _, w := range l.Words {
			switch {
			case w.Dynamic && writes:
				c.refuse("%s changes files, and its operand %s is only known at run time", what, w)
			case !w.Dynamic:
				c.vetOperand(cmd.Dirs, what, w.Value)
			}
			if c.err != nil {
				return
			}
		}
	}
	for _, as := range cmd.Assigns {
		for _, v := range as.Values {
			if !v.Dynamic {
				c.vetOperand(cmd.Dirs, what, v.Value)
			}
		}
	}
}

// vetOperand checks a word that may be a path (or hold one after "=", or
// after a short option such as -o/abs/path) in every possible directory.
func (c *commandCheck) vetOperand(dirs []string, what, v string) {
	cands := []string{v}
	if _, after, ok := strings.Cut(v, "="); ok {
		cands = append(cands, after)
	}
	if len(v) > 2 && v[0] == '-' && v[1] != '-' && v[2] == '/' {
		cands = append(cands, v[2:])
	}
	for _, cand := range cands {
		if cand == "" {
			continue
		}
		cand = globBase(cand)
		for _, cwd := range dirs {
			key := [2]string{cwd, cand}
			if c.fine[key] || c.staysInside(cwd, cand) {
				continue
			}
			p, ok := join(cwd, cand)
			if !ok {
				continue // refused by the cwd check already for commands
			}
			if err := c.g.checkPath(p); err != nil {
				c.refuse("%s names %s: %v", what, v, err)
				return
			}
			c.fine[key] = true
		}
	}
}

// staysInside is the fast path of vetOperand: a relative operand without
// ".." in a directory inside the worktree names a path inside the
// worktree unless one of its existing components is a symlink (which the
// full check then resolves). Most operands (flags, messages, ./...) end
// here after a stat or two.
func (c *commandCheck) staysInside(cwd, rel string) bool {
	if cwd == "" || filepath.IsAbs(rel) || strings.HasPrefix(rel, "~") {
		return false
	}
	in, seen := c.inside[cwd]
	if !seen {
		real := canonicalPrefix(cwd)
		in = real == c.g.worktree || above(c.g.worktree, real)
		c.inside[cwd] = in
	}
	if !in {
		return false
	}
	p := cwd
	for _, part := range strings.Split(filepath.ToSlash(rel), "/") {
		switch part {
		case "", ".":
			continue
		case "..":
			return false
		}
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if err != nil {
			return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) // the rest is made as written
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return false
		}
	}
	return true
}

// writers are programs whose arguments are files they create, change or
// delete. Their operands must be known before the command runs.
var writers = map[string]bool{
	"rm": true, "rmdir": true, "unlink": true, "shred": true, "mv": true, "cp": true, "install": true,
	"ln": true, "link": true, "touch": true, "mkdir": true, "mkfifo": true, "mknod": true,
	"chmod": true, "chown": true, "chgrp": true, "chattr": true, "setfacl": true, "truncate": true,
	"dd": true, "tee": true, "patch": true, "rsync": true, "scp": true, "tar": true, "unzip": true,
	"zip": true, "gzip": true, "gunzip": true, "bzip2": true, "xz": true,
}

// writesFiles reports whether a command (wrappers included) involves a
// program that writes the files its arguments name: one of writers, or
// sed/perl/ruby with -i (in-place editing).
func writesFiles(cmd *shellcmd.Command) bool {
	inPlace, editor := false, false
	for _, l := range cmd.Layers {
		for _, w := range l.Words {
			if w.Dynamic {
				continue
			}
			name := filepath.Base(w.Value)
			if writers[name] {
				return true
			}
			if name == "sed" || name == "perl" || name == "ruby" {
				editor = true
			}
			if strings.HasPrefix(w.Value, "-i") || strings.HasPrefix(w.Value, "--in-place") {
				inPlace = true
			}
		}
	}
	return editor && inPlace
}

// join makes v absolute against cwd; ok is false when v is relative and
// cwd unknown.
func join(cwd, v string) (string, bool) {
	if filepath.IsAbs(v) {
		return filepath.Clean(v), true
	}
	if cwd == "" {
		return "", false
	}
	return filepath.Join(cwd, v), true
}

// globBase cuts a word with glob characters back to the directory before
// the first of them: "src/*.go" → "src", "/ma*/x" → "/". A glob may match
// anything there.
func globBase(v string) string {
	i := strings.IndexAny(v, "*?[")
	if i < 0 {
		return v
	}
	dir := v[:i]
	if j := strings.LastIndexByte(dir, '/'); j >= 0 {
		if j == 0 {
			return "/"
		}
		return dir[:j]
	}
	return "."
}

func short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
}
