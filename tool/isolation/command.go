package isolation

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/cohort-dev/cohort/permission"
)

// Limits that keep the analysis of hostile input cheap. Past them the
// command is refused.
const (
	maxLineBytes = 1 << 20
	maxDepth     = 8
	maxSteps     = 5000
	maxCwds      = 16
	maxFields    = 10000
)

// commandCheck walks one command line in execution order, tracking the
// directories the next command may run in, and records the first reason
// to refuse it.
type commandCheck struct {
	g *Guard
	// cwds are the directories the next command may run in; "" stands for
	// one that cannot be told (cd "$dir", cd -). cd only ever adds: a
	// command after a cd may run before or after it (cd x || true, loops,
	// subshells).
	cwds    []string
	funcs   map[string]*syntax.Stmt
	cdpath  bool // the line mentions CDPATH: relative cd targets are unknown
	depth   int
	steps   int
	nfields int
	err     error
	// Per-check caches of what directories were found to be (a cwd's
	// CheckWrite verdict; whether it lies inside the worktree).
	cwdErr map[string]error
	inside map[string]bool
}

func newCommandCheck(g *Guard, dir string) *commandCheck {
	c := &commandCheck{g: g, funcs: map[string]*syntax.Stmt{}, cwdErr: map[string]error{}, inside: map[string]bool{}}
	if filepath.IsAbs(dir) {
		c.cwds = []string{filepath.Clean(dir)}
	} else {
		c.cwds = []string{""}
	}
	return c
}

func (c *commandCheck) refuse(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf(format, args...)
	}
}

// script parses and walks a (possibly nested) script.
func (c *commandCheck) script(src string) {
	switch {
	case c.err != nil:
		return
	case len(src) > maxLineBytes:
		c.refuse("the command is longer than %d bytes, too long to check", maxLineBytes)
		return
	case c.depth >= maxDepth:
		c.refuse("commands are nested more than %d levels deep, too deep to check", maxDepth)
		return
	}
	if strings.Contains(src, "CDPATH") {
		c.cdpath = true
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		c.refuse("the shell parser cannot read the command (%v), so where it writes cannot be told", err)
		return
	}
	c.depth++
	c.stmts(f.Stmts)
	c.depth--
}

func (c *commandCheck) stmts(list []*syntax.Stmt) {
	for _, s := range list {
		c.stmt(s)
	}
}

func (c *commandCheck) stmt(s *syntax.Stmt) {
	if s == nil || c.err != nil {
		return
	}
	if c.steps++; c.steps > maxSteps {
		c.refuse("the command has more than %d parts, too many to check", maxSteps)
		return
	}
	for _, r := range s.Redirs {
		c.redirect(r)
	}
	c.command(s.Cmd)
}

// command walks one compound or simple command.
func (c *commandCheck) command(cmd syntax.Command) {
	switch x := cmd.(type) {
	case nil:
	case *syntax.CallExpr:
		c.call(x)
	case *syntax.BinaryCmd:
		c.stmt(x.X)
		c.stmt(x.Y)
	case *syntax.Block:
		c.stmts(x.Stmts)
	case *syntax.Subshell:
		c.stmts(x.Stmts)
	case *syntax.IfClause:
		for ic := x; ic != nil; ic = ic.Else {
			c.stmts(ic.Cond)
			c.stmts(ic.Then)
		}
	case *syntax.WhileClause:
		for range 2 { // a cd in one iteration moves the next
			c.stmts(x.Cond)
			c.stmts(x.Do)
		}
	case *syntax.ForClause:
		if x.Loop != nil {
			c.subst(x.Loop)
		}
		for range 2 {
			c.stmts(x.Do)
		}
	case *syntax.CaseClause:
		c.subst(x.Word)
		for _, it := range x.Items {
			for _, p := range it.Patterns {
				c.subst(p)
			}
			c.stmts(it.Stmts)
		}
	case *syntax.FuncDecl:
		if x.Name != nil {
			c.funcs[x.Name.Value] = x.Body
		}
		c.stmt(x.Body) // as if it ran here; calls walk it again where they run
	case *syntax.DeclClause:
		for _, a := range x.Args {
			c.assign(a)
		}
	case *syntax.ArithmCmd, *syntax.LetClause, *syntax.TestClause:
		c.subst(x)
	case *syntax.TimeClause:
		c.stmt(x.Stmt)
	case *syntax.CoprocClause:
		c.stmt(x.Stmt)
	case *syntax.TestDecl:
		c.subst(x.Description)
		c.stmt(x.Body)
	default:
		c.refuse("the command uses a shell construct (%T) that the check does not understand", cmd)
	}
}

// subst walks the command and process substitutions inside a node: they
// run in the current directory before the command that holds them.
func (c *commandCheck) subst(n syntax.Node) {
	if n == nil || c.err != nil {
		return
	}
	if w, ok := n.(*syntax.Word); ok && w == nil {
		return
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		if c.err != nil {
			return false
		}
		switch x := n.(type) {
		case *syntax.CmdSubst:
			c.nest(x.Stmts)
			return false
		case *syntax.ProcSubst:
			c.nest(x.Stmts)
			return false
		}
		return true
	})
}

func (c *commandCheck) nest(list []*syntax.Stmt) {
	if c.depth >= maxDepth {
		c.refuse("commands are nested more than %d levels deep, too deep to check", maxDepth)
		return
	}
	c.depth++
	c.stmts(list)
	c.depth--
}

// gitPathVars are variables that send git to another repository or work
// tree: set to a path in the main checkout, a harmless-looking git commit
// would write there.
var gitPathVars = map[string]bool{"GIT_DIR": true, "GIT_WORK_TREE": true, "GIT_INDEX_FILE": true,
	"GIT_COMMON_DIR": true, "GIT_OBJECT_DIRECTORY": true, "GIT_ALTERNATE_OBJECT_DIRECTORIES": true}

// assign walks an assignment's substitutions and refuses git's location
// variables pointed at the protected area (or at a place only known at run
// time).
func (c *commandCheck) assign(a *syntax.Assign) {
	if a == nil {
		return
	}
	if a.Value != nil {
		c.subst(a.Value)
	}
	if a.Array != nil {
		c.subst(a.Array)
	}
	if a.Name == nil || !gitPathVars[a.Name.Value] || a.Value == nil || c.err != nil {
		return
	}
	vals, ok := c.fields(a.Value)
	if !ok {
		c.refuse("%s is set to a value only known at run time", a.Name.Value)
		return
	}
	for _, v := range vals {
		c.vetOperand("setting "+a.Name.Value, v)
	}
}

// redirect vets an output redirection's target.
func (c *commandCheck) redirect(r *syntax.Redirect) {
	c.subst(r.Word)
	if r.Hdoc != nil {
		c.subst(r.Hdoc) // an unquoted here-document runs its $(...)
	}
	switch r.Op {
	case syntax.RdrOut, syntax.AppOut, syntax.RdrInOut, syntax.ClbOut,
		syntax.RdrAll, syntax.AppAll, syntax.RdrAllClob, syntax.AppAllClob:
	case syntax.DplOut:
		if vals, ok := c.fields(r.Word); ok && len(vals) == 1 && (vals[0] == "-" || isDigits(vals[0])) {
			return // >&2 duplicates a descriptor
		}
	default:
		return // input, here-documents
	}
	if c.err != nil {
		return
	}
	target := printNode(r.Word)
	vals, ok := c.fields(r.Word)
	if !ok {
		c.refuse("output is redirected to %s, a file only known at run time", target)
		return
	}
	for _, v := range vals {
		for _, cwd := range c.cwds {
			p, ok := join(cwd, v)
			if !ok {
				c.refuse("output is redirected to %s in a directory only known at run time (after a cd to a variable or to -)", v)
				return
			}
			if err := c.g.files.CheckWrite(p); err != nil {
				c.refuse("output is redirected to %s: %v", v, trimSentinel(err))
				return
			}
		}
	}
}

// arg is one word of a simple command after expansion.
type arg struct {
	val string
	dyn bool // only known at run time
}

// call walks a simple command.
func (c *commandCheck) call(x *syntax.CallExpr) {
	for _, a := range x.Assigns {
		c.assign(a)
	}
	for _, w := range x.Args {
		c.subst(w)
	}
	if len(x.Args) == 0 || c.err != nil {
		return
	}
	var args []arg
	for _, w := range x.Args {
		vals, ok := c.fields(w)
		if !ok {
			args = append(args, arg{val: printNode(w), dyn: true})
			continue
		}
		for _, v := range vals {
			args = append(args, arg{val: v})
		}
	}
	if c.err != nil || len(args) == 0 {
		return
	}
	head := 0
	for head < len(args)-1 && !args[head].dyn && (args[head].val == "command" || args[head].val == "builtin") {
		head++
	}
	if args[head].dyn {
		c.refuse("the program to run, %s, is only known at run time", args[head].val)
		return
	}
	switch name := args[head].val; name {
	case "cd", "pushd":
		c.cd(args[head+1:])
		return
	case "popd":
		c.addCwds("")
		return
	default:
		if body, ok := c.funcs[name]; ok {
			c.nest([]*syntax.Stmt{body}) // a function runs where it is called
			return
		}
	}
	c.nested(args)
	c.vet(x, args)
}

// cd adds the directories a cd may move to.
func (c *commandCheck) cd(args []arg) {
	var target *arg
	dashes := false
	for i := range args {
		a := &args[i]
		if !a.dyn && !dashes && a.val == "--" {
			dashes = true
			continue
		}
		if !a.dyn && !dashes && len(a.val) > 1 && a.val[0] == '-' {
			continue // -P, -L, -e, -@
		}
		target = a
		break
	}
	switch {
	case target == nil:
		c.addCwds(c.g.home) // "" when unknown
	case target.dyn || target.val == "-" || target.val == "":
		c.addCwds("")
	case filepath.IsAbs(target.val):
		c.addCwds(filepath.Clean(target.val))
	case c.cdpath:
		c.addCwds("")
	default:
		var next []string
		for _, cwd := range c.cwds {
			p, _ := join(cwd, target.val)
			next = append(next, p)
		}
		c.addCwds(next...)
	}
}

func (c *commandCheck) addCwds(dirs ...string) {
	for _, d := range dirs {
		known := false
		for _, have := range c.cwds {
			if have == d {
				known = true
				break
			}
		}
		if known {
			continue
		}
		if len(c.cwds) >= maxCwds {
			d = "" // too many to follow: one of them is unknown
			if c.hasCwd("") {
				continue
			}
		}
		c.cwds = append(c.cwds, d)
	}
}

func (c *commandCheck) hasCwd(d string) bool {
	for _, have := range c.cwds {
		if have == d {
			return true
		}
	}
	return false
}

// shells run their -c argument as a script; su runs its --command.
var shells = map[string]bool{"bash": true, "sh": true, "zsh": true, "dash": true, "ksh": true,
	"mksh": true, "ash": true, "busybox": true}

// nested walks scripts a command runs from its arguments: sh -c SCRIPT
// (under any wrapper: sudo, env, timeout, xargs, find -exec, ...), su -c
// SCRIPT and eval ARGS.
func (c *commandCheck) nested(args []arg) {
	for i, a := range args {
		if a.dyn {
			continue
		}
		name := filepath.Base(a.val)
		switch {
		case shells[name]:
			if j := shellScript(args[i+1:]); j >= 0 {
				c.nestedScript(name, args[i+1+j])
			}
		case name == "su":
			for j := i + 1; j < len(args); j++ {
				v := args[j].val
				if args[j].dyn {
					continue
				}
				if after, ok := strings.CutPrefix(v, "--command="); ok {
					c.nestedScript(name, arg{val: after})
				} else if (v == "-c" || v == "--command") && j+1 < len(args) {
					c.nestedScript(name, args[j+1])
				}
			}
		case name == "eval":
			var parts []string
			for _, e := range args[i+1:] {
				if e.dyn {
					c.refuse("eval runs %s, a command only known at run time", e.val)
					return
				}
				parts = append(parts, e.val)
			}
			c.nestedScript(name, arg{val: strings.Join(parts, " ")})
		}
		if c.err != nil {
			return
		}
	}
}

// shellScript returns the index of the script argument of a shell given
// its arguments (after its name), or -1 when it has no -c.
func shellScript(rest []arg) int {
	for j := 0; j < len(rest); j++ {
		v := rest[j].val
		switch {
		case rest[j].dyn:
			return -1
		case v == "-o" || v == "+o" || v == "-O" || v == "+O":
			j++ // takes an argument
		case v == "--" || v == "-" || !strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "+"):
			return -1 // a script file or the end of the options
		case !strings.HasPrefix(v, "--") && strings.ContainsRune(v[1:], 'c'):
			if j+1 < len(rest) {
				return j + 1
			}
			return -1
		}
	}
	return -1
}

func (c *commandCheck) nestedScript(shell string, script arg) {
	if script.dyn {
		c.refuse("%s runs the script %s, which is only known at run time", shell, script.val)
		return
	}
	c.script(script.val)
}

// vet checks one simple command that is not read-only: where it runs and
// every path its arguments may name.
func (c *commandCheck) vet(x *syntax.CallExpr, args []arg) {
	text := printNode(x)
	if permission.IsReadOnlyCommand(text) {
		return
	}
	show := short(text)
	for _, cwd := range c.cwds {
		if cwd == "" {
			c.refuse("`%s` may run in a directory only known at run time (after a cd to a variable or to -), and it is not a read-only command", show)
			return
		}
		err, seen := c.cwdErr[cwd]
		if !seen {
			err = c.g.files.CheckWrite(cwd)
			c.cwdErr[cwd] = err
		}
		if err != nil {
			c.refuse("`%s` would run in %s, inside the main checkout, and it is not a read-only command", show, cwd)
			return
		}
	}
	writes := writesFiles(args)
	for _, a := range args {
		if a.dyn {
			if writes {
				c.refuse("`%s` changes files, and its operand %s is only known at run time", show, a.val)
				return
			}
			continue
		}
		c.vetOperand("`"+show+"`", a.val)
		if c.err != nil {
			return
		}
	}
	for _, a := range x.Assigns {
		if a.Value == nil {
			continue
		}
		if vals, ok := c.fields(a.Value); ok {
			for _, v := range vals {
				c.vetOperand("`"+show+"`", v)
			}
		}
	}
}

// vetOperand checks a word that may be a path (or hold one after "=", or
// after a short option such as -o/abs/path) in every possible directory.
func (c *commandCheck) vetOperand(what, v string) {
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
		for _, cwd := range c.cwds {
			if c.staysInside(cwd, cand) {
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
		real := canonical(cwd)
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

// writesFiles reports whether a command line (wrappers included) involves
// a program that writes the files its arguments name: one of writers, or
// sed/perl/ruby with -i (in-place editing).
func writesFiles(args []arg) bool {
	inPlace := false
	editor := false
	for _, a := range args {
		if a.dyn {
			continue
		}
		name := filepath.Base(a.val)
		if writers[name] {
			return true
		}
		if name == "sed" || name == "perl" || name == "ruby" {
			editor = true
		}
		if strings.HasPrefix(a.val, "-i") || strings.HasPrefix(a.val, "--in-place") {
			inPlace = true
		}
	}
	return editor && inPlace
}

// fields expands a word without running anything (quote removal, brace
// and tilde expansion); ok is false when its value is only known at run
// time.
func (c *commandCheck) fields(w *syntax.Word) ([]string, bool) {
	if w == nil || !staticWord(w) {
		return nil, false
	}
	if n := braceFields(w); n > maxFields || c.nfields+n > maxFields {
		c.refuse("brace expansion makes more than %d words, too many to check", maxFields)
		return nil, false
	}
	cfg := &expand.Config{Env: expand.ListEnviron("HOME=" + c.g.home)}
	vals, err := expand.Fields(cfg, w)
	if err != nil || len(vals) == 0 {
		return nil, false
	}
	c.nfields += len(vals)
	return vals, true
}

// staticWord reports whether w's value is fixed by the text alone.
func staticWord(w *syntax.Word) bool {
	for i, p := range w.Parts {
		switch pt := p.(type) {
		case *syntax.Lit:
			// ~user needs the user database: unknown here.
			if i == 0 && strings.HasPrefix(pt.Value, "~") && len(pt.Value) > 1 && pt.Value[1] != '/' {
				return false
			}
		case *syntax.SglQuoted:
			if pt.Dollar {
				return false // $'...' escapes: let the shell decide
			}
		case *syntax.DblQuoted:
			for _, in := range pt.Parts {
				if _, ok := in.(*syntax.Lit); !ok {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// braceFields bounds how many words brace expansion makes of w.
func braceFields(w *syntax.Word) int {
	cp := *w
	cp.Parts = append([]syntax.WordPart(nil), w.Parts...)
	if !syntax.SplitBraces(&cp) {
		return 1
	}
	return braceProduct(cp.Parts)
}

func braceProduct(parts []syntax.WordPart) int {
	n := 1
	for _, p := range parts {
		b, ok := p.(*syntax.BraceExp)
		if !ok {
			continue
		}
		k := len(b.Elems)
		if b.Sequence {
			k = maxFields + 1 // {1..N}: bounded below by its text, so refuse large ones cheaply
			if len(b.Elems) >= 2 {
				k = sequenceLen(b.Elems[0].Lit(), b.Elems[1].Lit())
			}
		}
		n *= max(k, 1)
		for _, e := range b.Elems {
			if n > maxFields {
				return n
			}
			n *= braceProduct(e.Parts)
		}
		if n > maxFields {
			return n
		}
	}
	return n
}

// sequenceLen is the length of {from..to}, or more than maxFields when it
// cannot be told.
func sequenceLen(from, to string) int {
	var x, y int
	if _, err := fmt.Sscanf(from+" "+to, "%d %d", &x, &y); err != nil {
		if len(from) != 1 || len(to) != 1 {
			return maxFields + 1
		}
		x, y = int(from[0]), int(to[0])
	}
	d := y - x
	if d < 0 {
		d = -d
	}
	if d > maxFields {
		return maxFields + 1
	}
	return d + 1
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

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func printNode(n syntax.Node) string {
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, n); err != nil {
		return fmt.Sprintf("%T", n)
	}
	return strings.TrimSpace(b.String())
}

func short(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
}
