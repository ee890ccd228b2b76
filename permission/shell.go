package permission

import (
	"fmt"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// dynWord stands for a word whose value is only known at run time ($x,
// $(cmd), $((1+2)), ...). A NUL byte cannot occur in a real argument.
const dynWord = "\x00"

// layer is one level of a command: "sudo rm -rf x" has the layers
// [sudo rm -rf x] and [rm -rf x]. words are quote-removed and
// brace-expanded but not globbed; dynamic words are dynWord.
type layer struct {
	words []string
	// transparent wrappers (nohup, timeout, env with harmless variables,
	// bash -c with a fully analysed script) add nothing to what their inner
	// command does, so an allow rule for the inner command covers them.
	transparent bool
	// openArgs: more arguments arrive at run time (xargs, find -exec).
	openArgs bool
	// alts are extra word lists deny and ask rules are tried against, for
	// wrappers whose options could not be parsed with certainty.
	alts [][]string
}

func (l *layer) name() string {
	if len(l.words) == 0 {
		return ""
	}
	return l.words[0]
}

// command is one simple command found in a line, with the wrappers it runs
// under (outermost first) and the working directories it may run in.
type command struct {
	layers []*layer
	cwds   []string // "" stands for a directory that cannot be determined
}

func (c *command) inner() *layer { return c.layers[len(c.layers)-1] }

// redirect is an I/O redirection to or from a file.
type redirect struct {
	write  bool
	target string // dynWord when not static
	cwds   []string
}

// analysis is everything a line does that permissions care about.
type analysis struct {
	line     string
	commands []*command
	redirs   []redirect
	// cds are the directories "cd" may change to ("" when unknown).
	cds []string
	// opaque lists what could not be looked into (parse errors, dynamic
	// command names, scripts read from files or stdin). Such a line is never
	// auto-allowed, and deny rules cannot be ruled out for it.
	opaque []string
	// unsafe lists what was understood but must never be auto-allowed
	// (eval, PATH=..., unparsable wrapper options).
	unsafe []string
}

// Limits that keep analysis of hostile input cheap.
const (
	maxLineBytes  = 1 << 20
	maxDepth      = 8
	maxCommands   = 1000
	maxCwds       = 16
	maxGlobResult = 1000
	maxFields     = 10000 // words after brace expansion, per line
)

type analyzer struct {
	home   string
	nwords int // words produced so far
	res    *analysis
	cwds   []string
	outer  []*layer
	depth  int
	// tooMany is set once a size limit was hit (reported once).
	tooMany bool
}

// analyze parses a Bash command line. cwd is where it starts ("" when
// unknown); home expands "~".
func analyze(line, cwd, home string) *analysis {
	a := &analyzer{home: home, res: &analysis{line: line}, cwds: []string{cwd}}
	a.script(line)
	return a.res
}

func (a *analyzer) opaque(format string, args ...any) {
	a.res.opaque = append(a.res.opaque, fmt.Sprintf(format, args...))
}

func (a *analyzer) unsafe(format string, args ...any) {
	a.res.unsafe = append(a.res.unsafe, fmt.Sprintf(format, args...))
}

// script parses and walks a (possibly nested) script.
func (a *analyzer) script(src string) {
	if len(src) > maxLineBytes {
		a.opaque("the command is longer than %d bytes", maxLineBytes)
		return
	}
	if a.depth > maxDepth {
		a.opaque("commands are nested more than %d levels deep", maxDepth)
		return
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		a.opaque("the shell parser could not read it: %v", err)
		return
	}
	a.depth++
	a.stmts(f.Stmts)
	a.depth--
}

func (a *analyzer) stmts(ss []*syntax.Stmt) {
	for _, s := range ss {
		a.stmt(s)
	}
}

func (a *analyzer) stmt(s *syntax.Stmt) {
	if len(a.res.commands) > maxCommands {
		if !a.tooMany {
			a.tooMany = true
			a.opaque("more than %d commands", maxCommands)
		}
		return
	}
	switch c := s.Cmd.(type) {
	case nil:
	case *syntax.CallExpr:
		a.call(c)
	case *syntax.BinaryCmd:
		a.stmt(c.X)
		a.stmt(c.Y)
	case *syntax.Subshell:
		a.stmts(c.Stmts)
	case *syntax.Block:
		a.stmts(c.Stmts)
	case *syntax.IfClause:
		for cl := c; cl != nil; cl = cl.Else {
			a.stmts(cl.Cond)
			a.stmts(cl.Then)
		}
	case *syntax.WhileClause:
		a.stmts(c.Cond)
		a.stmts(c.Do)
	case *syntax.ForClause:
		a.forLoop(c)
	case *syntax.CaseClause:
		a.substitutions(c.Word)
		for _, it := range c.Items {
			for _, p := range it.Patterns {
				a.substitutions(p)
			}
			a.stmts(it.Stmts)
		}
	case *syntax.FuncDecl:
		// The body is analysed as if it ran; calling the function by name is
		// a command no allow rule knows.
		a.stmt(c.Body)
	case *syntax.ArithmCmd, *syntax.LetClause:
		a.substitutions(c)
		a.unsafe("arithmetic evaluation can run commands hidden in variables")
	case *syntax.TestClause:
		a.testClause(c)
	case *syntax.DeclClause:
		a.decl(c)
	case *syntax.TimeClause:
		if c.Stmt != nil {
			a.stmt(c.Stmt)
		}
	case *syntax.CoprocClause:
		if c.Stmt != nil {
			a.stmt(c.Stmt)
		}
	case *syntax.TestDecl:
		a.stmt(c.Body)
	default:
		a.opaque("unsupported shell construct %T", c)
	}
	for _, r := range s.Redirs {
		a.redirect(r)
	}
}

func (a *analyzer) forLoop(c *syntax.ForClause) {
	switch l := c.Loop.(type) {
	case *syntax.WordIter:
		for _, w := range l.Items {
			a.substitutions(w)
		}
	case *syntax.CStyleLoop:
		a.substitutions(l)
		a.unsafe("arithmetic evaluation can run commands hidden in variables")
	}
	a.stmts(c.Do)
}

func (a *analyzer) testClause(c *syntax.TestClause) {
	a.substitutions(c)
	dyn := false
	syntax.Walk(c, func(n syntax.Node) bool {
		if _, ok := n.(*syntax.ParamExp); ok {
			dyn = true
		}
		return !dyn
	})
	if dyn {
		a.unsafe("[[ ]] with variables can evaluate arithmetic that runs commands")
	}
}

// decl handles declare/local/export/readonly/typeset/nameref.
func (a *analyzer) decl(c *syntax.DeclClause) {
	for _, as := range c.Args {
		if as.Name == nil {
			if as.Value != nil {
				a.substitutions(as.Value)
			}
			continue
		}
		a.assign(as, c.Variant.Value == "export" || c.Variant.Value == "declare" || c.Variant.Value == "typeset")
	}
}

// assign vets one assignment. exported assignments reach child processes.
func (a *analyzer) assign(as *syntax.Assign, exported bool) {
	a.substitutions(as)
	if as.Name == nil {
		return
	}
	name := as.Name.Value
	if exported && !safeEnvVar(name) {
		a.unsafe("setting %s for a command can change what it runs", name)
	} else if !exported && !safeShellVar(name) {
		a.unsafe("setting %s can change what later commands run", name)
	}
}

// substitutions walks n for command and process substitutions, which run
// as commands of their own.
func (a *analyzer) substitutions(n syntax.Node) {
	if n == nil {
		return
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CmdSubst:
			a.stmts(x.Stmts)
			return false
		case *syntax.ProcSubst:
			a.stmts(x.Stmts)
			return false
		case *syntax.ParamExp:
			if x.Exp != nil && x.Exp.Op == syntax.OtherParamOps {
				a.unsafe("${var@op} can expand text as a prompt or command")
			}
		}
		return true
	})
}

func (a *analyzer) call(c *syntax.CallExpr) {
	for _, as := range c.Assigns {
		a.assign(as, len(c.Args) > 0)
	}
	if len(c.Args) == 0 {
		return
	}
	for _, w := range c.Args {
		a.substitutions(w)
	}
	l := &layer{}
	for _, w := range c.Args {
		l.words = append(l.words, a.fields(w)...)
	}
	a.record(append(append([]*layer(nil), a.outer...), l))
}

// maxLayers bounds wrapper nesting ("nice nice nice ... cmd").
const maxLayers = 64

// record adds the command whose layers are given, after unwrapping its
// innermost layer: a wrapper adds the command it runs as one more layer,
// a shell with -c adds every command of its script, find adds one command
// per -exec.
func (a *analyzer) record(layers []*layer) {
	cur := layers[len(layers)-1]
	u := a.unwrap(cur)
	if u.opaque != "" {
		a.opaque("%s", u.opaque)
	}
	if u.unsafe != "" {
		a.unsafe("%s", u.unsafe)
	}
	switch {
	case u.script != nil:
		a.nested(layers, *u.script)
		return
	case len(u.inner) > 0 && len(layers) < maxLayers:
		for _, in := range u.inner {
			a.record(append(append([]*layer(nil), layers...), in))
		}
		return
	case len(u.inner) > 0:
		a.opaque("wrappers are nested more than %d levels deep", maxLayers)
	}
	cmd := &command{layers: layers, cwds: append([]string(nil), a.cwds...)}
	switch n := cur.name(); {
	case n == dynWord:
		a.opaque("the command name is only known at run time")
	case isGlob(n):
		a.opaque("the command name %s is a pattern the shell expands", plain(n))
	}
	a.res.commands = append(a.res.commands, cmd)
	a.builtinEffects(cmd)
}

// nested analyses a script a wrapper runs (bash -c, eval, su -c) with the
// wrapper's layers as the outer layers of every command inside.
func (a *analyzer) nested(layers []*layer, src string) {
	before := len(a.res.commands)
	saved := a.outer
	a.outer = layers
	a.script(src)
	a.outer = saved
	if len(a.res.commands) == before {
		// Nothing inside: the wrapper itself is the command.
		a.res.commands = append(a.res.commands, &command{layers: layers, cwds: append([]string(nil), a.cwds...)})
	}
}

// builtinEffects tracks cd and flags builtins that change later commands.
func (a *analyzer) builtinEffects(cmd *command) {
	in := cmd.inner()
	switch in.name() {
	case "cd", "pushd":
		a.cd(in)
	case "popd":
		a.setCwdUnknown("popd returns to a directory that cannot be determined")
	case "source", ".":
		a.opaque("%s runs commands from a file", in.name())
	case "hash", "enable":
		a.unsafe("%s can change which program a command name runs", in.name())
	case "read", "mapfile", "readarray", "getopts":
		for _, w := range in.words[1:] {
			w = plain(w)
			if !strings.HasPrefix(w, "-") && w != dynWord && !safeShellVar(w) && validName(w) {
				a.unsafe("%s may assign %s, which can change what later commands run", in.name(), w)
			}
		}
	case "printf":
		for i, w := range in.words {
			if w == "-v" && i+1 < len(in.words) && !safeShellVar(in.words[i+1]) {
				a.unsafe("printf -v assigns %s, which can change what later commands run", in.words[i+1])
			}
		}
	}
}

func (a *analyzer) cd(l *layer) {
	target, i := "", 1
	for ; i < len(l.words); i++ {
		w := l.words[i]
		if w == "--" {
			i++
			break
		}
		if !strings.HasPrefix(w, "-") || w == "-" {
			break
		}
	}
	switch {
	case i >= len(l.words):
		target = a.home
	default:
		target = l.words[i]
	}
	if isGlob(target) {
		// The shell picks the directory when it runs: check what the pattern
		// matches against deny rules, but track the cwd as unknown.
		for _, cwd := range a.cwds {
			if cwd != "" {
				a.res.cds = append(a.res.cds, absolute(cwd, plain(target)))
			}
		}
		a.setCwdUnknown("cd to a directory given as a pattern")
		return
	}
	if target == "" || target == "-" || target == dynWord || strings.HasPrefix(target, "+") {
		a.setCwdUnknown("cd to a directory that cannot be determined")
		return
	}
	next := append([]string(nil), a.cwds...)
	for _, cwd := range a.cwds {
		switch {
		case filepath.IsAbs(target):
			next = append(next, filepath.Clean(target))
		case cwd == "":
			next = append(next, "")
		default:
			next = append(next, filepath.Clean(cwd+"/"+target))
		}
	}
	a.res.cds = append(a.res.cds, next[len(a.cwds):]...)
	a.cwds = dedupe(next)
	if len(a.cwds) > maxCwds {
		a.setCwdUnknown("too many possible working directories")
	}
}

func (a *analyzer) setCwdUnknown(why string) {
	a.unsafe("%s", why)
	a.res.cds = append(a.res.cds, "")
	a.cwds = dedupe(append(a.cwds, ""))
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	out := s[:0:0]
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func (a *analyzer) redirect(r *syntax.Redirect) {
	if r.Hdoc != nil {
		a.substitutions(r.Hdoc)
	}
	if r.Word == nil {
		return
	}
	a.substitutions(r.Word)
	switch r.Op {
	case syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
		return
	}
	fs := a.fields(r.Word)
	target := dynWord
	if len(fs) == 1 {
		target = fs[0]
	}
	write := true
	switch r.Op {
	case syntax.RdrIn:
		write = false
	case syntax.DplIn, syntax.DplOut:
		if target == "-" || isDigits(target) {
			return // duplicates or closes a descriptor
		}
		write = r.Op == syntax.DplOut
	}
	a.res.redirs = append(a.res.redirs, redirect{write: write, target: target, cwds: append([]string(nil), a.cwds...)})
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func validName(s string) bool {
	for i, c := range s {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || (i > 0 && c >= '0' && c <= '9')) {
			return false
		}
	}
	return s != ""
}
