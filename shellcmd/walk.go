package shellcmd

import (
	"fmt"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Limits that keep the analysis of hostile input cheap.
const (
	maxLineBytes = 1 << 20
	maxParsed    = 4 << 20 // bytes of script parsed, and of words expanded, in all (nested scripts and loops repeat text)
	maxDepth     = 8
	maxSteps     = 5000
	maxCommands  = 1000
	maxCwds      = 16
	maxFields    = 10000 // words after brace expansion, per line
	maxLayers    = 64
)

// frame is what surrounds a script being walked: the wrapper layers that
// run it, the variables they set and the notes about them.
type frame struct {
	layers  []*Layer
	assigns []*Assignment
	notes   []Note
}

type analyzer struct {
	opts   Options
	res    *Analysis
	parser *syntax.Parser
	expand *expand.Config
	// cwds are the directories the next command may run in; they only grow.
	cwds  []string
	frame frame
	// call is the simple command being recorded; pending collects notes
	// about it while its words are read.
	call    *syntax.CallExpr
	pending *[]Note
	funcs   map[string]*syntax.Stmt
	cdpath  bool
	// numeric names hold a number at this point of the walk; tainted ones
	// were set to something else; integer ones are declared -i (arith.go).
	numeric, tainted, integer map[string]bool
	depth                     int
	steps                     int
	nwords                    int // words expanded so far
	nbytes                    int // and their bytes
	parsed                    int // bytes of script parsed so far
}

func newAnalyzer(line string, opts Options) *analyzer {
	return &analyzer{
		opts:   opts,
		res:    &Analysis{Line: line},
		parser: syntax.NewParser(syntax.Variant(syntax.LangBash)),
		expand: &expand.Config{Env: expand.ListEnviron(environ(opts)...)},
		cwds:   []string{opts.Dir},
		funcs:  map[string]*syntax.Stmt{},

		numeric: map[string]bool{}, tainted: map[string]bool{}, integer: map[string]bool{},
	}
}

// note records a note for the line, and for the command being read if any.
func (a *analyzer) note(kind NoteKind, format string, args ...any) Note {
	n := Note{Kind: kind, Reason: fmt.Sprintf(format, args...)}
	if !slices.Contains(a.res.Notes, n) {
		a.res.Notes = append(a.res.Notes, n)
	}
	if a.pending != nil {
		*a.pending = append(*a.pending, n)
	}
	return n
}

// script parses and walks a (possibly nested) script.
func (a *analyzer) script(src string) {
	if len(src) > maxLineBytes {
		a.note(Unknown, "the command is longer than %d bytes", maxLineBytes)
		return
	}
	if a.depth >= maxDepth {
		a.note(Unknown, "commands are nested more than %d levels deep", maxDepth)
		return
	}
	if a.parsed += len(src); a.parsed > maxParsed {
		a.note(Unknown, "the command holds more than %d bytes of scripts in all", maxParsed)
		return
	}
	if a.steps >= maxSteps || len(a.res.Commands) >= maxCommands {
		return // reported by stmt already
	}
	if strings.Contains(src, "CDPATH") {
		a.cdpath = true
	}
	f, err := a.parser.Parse(strings.NewReader(src), "")
	if err != nil {
		a.note(Unknown, "the shell parser cannot read the command (%v)", err)
		return
	}
	a.depth++
	a.stmts(f.Stmts)
	a.depth--
}

// nest walks statements one level deeper (substitutions, function calls).
func (a *analyzer) nest(ss ...*syntax.Stmt) {
	if a.depth >= maxDepth {
		a.note(Unknown, "commands are nested more than %d levels deep", maxDepth)
		return
	}
	a.depth++
	a.scoped(func() { a.stmts(ss) })
	a.depth--
}

func (a *analyzer) stmts(ss []*syntax.Stmt) {
	for _, s := range ss {
		a.stmt(s)
	}
}

func (a *analyzer) stmt(s *syntax.Stmt) {
	if s == nil {
		return
	}
	if a.steps++; a.steps > maxSteps {
		a.note(Unknown, "the command has more than %d parts", maxSteps)
		return
	}
	if len(a.res.Commands) >= maxCommands {
		a.note(Unknown, "the command runs more than %d commands", maxCommands)
		return
	}
	for _, r := range s.Redirs {
		a.redirect(r) // opened before the command runs
	}
	a.command(s.Cmd)
}

// command walks one compound or simple command.
func (a *analyzer) command(cmd syntax.Command) {
	switch c := cmd.(type) {
	case nil:
	case *syntax.CallExpr:
		a.callExpr(c)
	case *syntax.BinaryCmd:
		if c.Op == syntax.AndStmt || c.Op == syntax.OrStmt {
			a.stmt(c.X)
			a.scoped(func() { a.stmt(c.Y) }) // may not run
		} else {
			a.scoped(func() { a.stmt(c.X) }) // pipeline parts run in subshells
			a.scoped(func() { a.stmt(c.Y) })
		}
	case *syntax.Subshell:
		a.scoped(func() { a.stmts(c.Stmts) })
	case *syntax.Block:
		a.stmts(c.Stmts)
	case *syntax.IfClause:
		a.scoped(func() {
			for cl := c; cl != nil; cl = cl.Else {
				a.stmts(cl.Cond)
				a.stmts(cl.Then)
			}
		})
	case *syntax.WhileClause:
		a.scoped(func() {
			a.loop(func() {
				a.stmts(c.Cond)
				a.stmts(c.Do)
			})
		})
	case *syntax.ForClause:
		a.forLoop(c)
	case *syntax.CaseClause:
		a.substitutions(c.Word)
		a.scoped(func() {
			for _, it := range c.Items {
				for _, p := range it.Patterns {
					a.substitutions(p)
				}
				a.stmts(it.Stmts)
			}
		})
	case *syntax.FuncDecl:
		a.funcDecl(c)
	case *syntax.ArithmCmd:
		a.arith(c.X, "((...))")
	case *syntax.LetClause:
		for _, x := range c.Exprs {
			a.arith(x, "let")
		}
	case *syntax.TestClause:
		a.testClause(c)
	case *syntax.DeclClause:
		a.decl(c)
	case *syntax.TimeClause:
		a.stmt(c.Stmt)
	case *syntax.CoprocClause:
		a.stmt(c.Stmt)
	case *syntax.TestDecl:
		a.substitutions(c.Description)
		a.stmt(c.Body)
	default:
		a.note(Unknown, "the command uses a shell construct (%T) the analysis does not know", c)
	}
}

func (a *analyzer) forLoop(c *syntax.ForClause) {
	switch l := c.Loop.(type) {
	case *syntax.WordIter:
		numeric := true
		for _, w := range l.Items {
			a.substitutions(w)
			numeric = numeric && len(w.Parts) == 1 && numericLiteral(w.Lit())
		}
		a.scoped(func() {
			if l.Name != nil {
				if numeric && len(l.Items) > 0 {
					a.setNumeric(l.Name.Value)
				} else {
					a.taint(l.Name.Value)
				}
			}
			a.loop(func() { a.stmts(c.Do) })
		})
	case *syntax.CStyleLoop:
		a.arith(l.Init, "a for (( )) loop") // always runs
		a.scoped(func() {
			a.loop(func() {
				a.arith(l.Cond, "a for (( )) loop")
				a.stmts(c.Do)
				a.arith(l.Post, "a for (( )) loop")
			})
		})
	}
}

// funcDecl walks a function's body as if it ran where it is defined, then
// remembers it for the places it is called.
func (a *analyzer) funcDecl(c *syntax.FuncDecl) {
	a.scoped(func() { a.stmt(c.Body) })
	if c.Name != nil {
		a.funcs[c.Name.Value] = c.Body
	}
	for _, n := range c.Names {
		a.funcs[n.Value] = c.Body
	}
}

func (a *analyzer) testClause(c *syntax.TestClause) {
	a.testExpr(c.X)
	dyn := false
	syntax.Walk(c, func(n syntax.Node) bool {
		if _, ok := n.(*syntax.ParamExp); ok {
			dyn = true
		}
		return !dyn
	})
	if dyn {
		a.note(Caution, "[[ ]] with variables can evaluate arithmetic that runs commands")
	}
}

// decl handles declare, local, export, readonly, typeset and nameref.
func (a *analyzer) decl(c *syntax.DeclClause) {
	integer := false
	for _, as := range c.Args {
		if as.Name != nil {
			if integer {
				a.integer[as.Name.Value] = true
			}
			a.assign(as, c.Variant.Value, false)
			continue
		}
		a.substitutions(as.Value) // an option such as -x, or a quoted name=value
		for _, w := range a.fields(as.Value) {
			switch v := w.Value; {
			case w.Static() && strings.HasPrefix(v, "-") || strings.HasPrefix(v, "+"):
				if strings.Contains(v, "n") {
					a.note(Hidden, "%s -n makes a name refer to another variable, whose subscript may run a command", c.Variant.Value)
				}
				integer = integer || strings.Contains(v, "i")
			default:
				name, _, _ := strings.Cut(v, "=")
				if n := a.nameArg(Word{Value: name, Dynamic: w.Dynamic, Glob: w.Glob}, c.Variant.Value); n != "" {
					a.taint(n)
				}
			}
		}
	}
}

// assign records one NAME=value (or NAME, or NAME=(...)).
func (a *analyzer) assign(as *syntax.Assign, builtin string, prefix bool) *Assignment {
	if as.Index != nil {
		a.arith(as.Index, "an array subscript")
	}
	a.substitutions(as.Value)
	if as.Array != nil {
		for _, el := range as.Array.Elems {
			if el.Index != nil {
				a.arith(el.Index, "an array subscript")
			}
			a.substitutions(el.Value)
		}
	}
	if as.Name == nil {
		return nil
	}
	switch {
	case as.Value != nil && as.Index == nil && numericLiteral(as.Value.Lit()) && !as.Append:
		if !prefix {
			a.setNumeric(as.Name.Value)
		}
	case as.Naked:
	default:
		if a.integer[as.Name.Value] {
			a.hiddenArith("%s is declared -i, so the value assigned to it is evaluated as arithmetic", as.Name.Value)
		}
		a.taint(as.Name.Value)
	}
	x := &Assignment{Name: as.Name.Value, Builtin: builtin, Prefix: prefix, Dirs: slices.Clone(a.cwds)}
	if as.Value != nil && as.Array == nil {
		x.Values = []Word{a.literal(as.Value)}
	}
	a.res.Assigns = append(a.res.Assigns, x)
	return x
}

// substitutions walks n for command and process substitutions, which run
// as commands of their own before the command holding them.
func (a *analyzer) substitutions(n syntax.Node) {
	if n == nil {
		return
	}
	if w, ok := n.(*syntax.Word); ok && w == nil {
		return
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		switch x := n.(type) {
		case *syntax.CmdSubst:
			a.nest(x.Stmts...)
			return false
		case *syntax.ProcSubst:
			a.nest(x.Stmts...)
			return false
		case *syntax.ArithmExp:
			a.arith(x.X, "$((...))")
			return false
		case *syntax.ParamExp:
			a.paramExp(x)
			return false
		}
		return true
	})
}

func (a *analyzer) redirect(r *syntax.Redirect) {
	if r.Hdoc != nil {
		a.substitutions(r.Hdoc) // an unquoted here-document runs its $(...)
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
	target := Word{Dynamic: true, src: r.Word}
	if len(fs) == 1 {
		target = fs[0]
	}
	a.noteStdio(r, target)
	write := true
	switch r.Op {
	case syntax.RdrIn:
		write = false
	case syntax.DplIn, syntax.DplOut:
		if target.Is("-") || (target.Static() && isDigits(target.Value)) {
			return // duplicates or closes a descriptor
		}
		write = r.Op == syntax.DplOut
	}
	a.res.Redirects = append(a.res.Redirects, &Redirect{Write: write, Target: target, Dirs: slices.Clone(a.cwds)})
}

// noteStdio sets StdioReopened for a redirection that puts on standard
// output or error (1 or 2) something other than a file opened for writing
// or the other of the two: "1<f", "2<&3", "1>&4".
func (a *analyzer) noteStdio(r *syntax.Redirect, target Word) {
	fd := ""
	if r.N != nil {
		fd = r.N.Value
	}
	switch r.Op {
	case syntax.RdrIn, syntax.DplIn:
		if fd == "" {
			return // standard input
		}
	case syntax.DplOut:
		if fd == "" {
			fd = "1"
		}
		if target.Static() && (target.Value == "1" || target.Value == "2" || target.Value == "-" || !isDigits(target.Value)) {
			return // between the two, a close, or a file (a write)
		}
	default:
		return // output to a file, which is checked as a write
	}
	if fd == "1" || fd == "2" {
		a.res.StdioReopened = true
	}
}

// callExpr walks a simple command: its assignments, its substitutions,
// then the command itself.
func (a *analyzer) callExpr(c *syntax.CallExpr) {
	savedCall, savedPending := a.call, a.pending
	defer func() { a.call, a.pending = savedCall, savedPending }()
	var own []Note
	a.call, a.pending = c, &own
	var assigns []*Assignment
	for _, as := range c.Assigns {
		if x := a.assign(as, "", len(c.Args) > 0); x != nil && len(c.Args) > 0 {
			assigns = append(assigns, x)
		}
	}
	if len(c.Args) == 0 {
		return
	}
	for _, w := range c.Args {
		a.substitutions(w)
	}
	l := &Layer{}
	for _, w := range c.Args {
		l.Words = append(l.Words, a.fields(w)...)
	}
	before := len(a.res.Commands)
	a.pending = nil
	a.record(append(slices.Clone(a.frame.layers), l),
		append(slices.Clone(a.frame.assigns), assigns...),
		append(slices.Clone(a.frame.notes), own...))
	name := l.Name()
	body, isFunc := a.funcs[name.Value]
	if !isFunc || !name.Static() {
		return
	}
	if n := a.res.Commands[before:]; len(n) == 1 && len(n[0].Layers) == len(a.frame.layers)+1 {
		n[0].Function = true
	}
	a.nest(body) // a function runs where it is called
}

// record adds the command whose layers are given, after unwrapping its
// innermost layer: a wrapper adds the command it runs as one more layer, a
// shell with -c adds every command of its script, find adds one command per
// -exec.
func (a *analyzer) record(layers []*Layer, assigns []*Assignment, notes []Note) {
	if len(a.res.Commands) >= maxCommands {
		a.note(Unknown, "the command runs more than %d commands", maxCommands)
		return
	}
	cur := layers[len(layers)-1]
	u := a.unwrap(cur)
	if len(u.assigns) > 0 {
		assigns = append(slices.Clone(assigns), u.assigns...)
	}
	for _, n := range u.notes {
		notes = append(slices.Clone(notes), a.note(n.Kind, "%s", n.Reason))
	}
	if u.script == nil && len(u.inner) == 0 && len(u.notes) == 0 && a.opts.ScriptArgs {
		var ok bool
		if u.inner, ok = scriptArgs(cur); !ok {
			notes = append(slices.Clone(notes), a.note(Unknown, "%s has more than %d scripts among its arguments", cur.Name(), maxScriptArgs))
		}
	}
	switch {
	case u.script != nil:
		a.nested(layers, assigns, notes, *u.script)
		return
	case len(u.inner) > 0 && len(layers) < maxLayers:
		for _, in := range u.inner {
			a.record(append(slices.Clone(layers), in), assigns, notes)
		}
		return
	case len(u.inner) > 0:
		notes = append(slices.Clone(notes), a.note(Unknown, "wrappers are nested more than %d levels deep", maxLayers))
	}
	cmd := &Command{Layers: layers, Dirs: slices.Clone(a.cwds), Assigns: assigns, Notes: notes, call: a.call}
	switch n := cur.Name(); {
	case n.Dynamic:
		cmd.Notes = append(cmd.Notes, a.note(Unknown, "the command name %s is only known at run time", n))
	case n.Glob:
		cmd.Notes = append(cmd.Notes, a.note(Unknown, "the command name %s is a pattern the shell expands", n))
	}
	a.res.Commands = append(a.res.Commands, cmd)
	a.builtin(cmd)
}

// nested walks a script a wrapper runs (bash -c, eval, su -c) with the
// wrapper's layers outside every command inside.
func (a *analyzer) nested(layers []*Layer, assigns []*Assignment, notes []Note, src string) {
	before := len(a.res.Commands)
	savedFrame, savedPending, call := a.frame, a.pending, a.call
	var own []Note
	a.frame, a.pending = frame{layers: layers, assigns: assigns, notes: notes}, &own
	a.script(src)
	a.frame, a.pending = savedFrame, savedPending
	if len(a.res.Commands) == before {
		// Nothing inside: the wrapper itself is the command.
		a.res.Commands = append(a.res.Commands, &Command{Layers: layers, Dirs: slices.Clone(a.cwds),
			Assigns: assigns, Notes: append(slices.Clone(notes), own...), call: call})
	}
}
