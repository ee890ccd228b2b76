package shellcmd

import (
	"maps"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Bash evaluates text as arithmetic in more places than $((...)): array
// subscripts, substring offsets and lengths, [[ -eq ]] and friends, let,
// declare -i values, and the variables named by ${!x}, [[ -v ]], read,
// printf -v and unset. Arithmetic evaluation of a variable evaluates its
// value in turn, and a subscript inside that value runs any $(...) in it:
// x='a[$(rm f)]'; echo $((x)) runs rm. Such a command is hidden in a
// variable's value, so these places get a Hidden note unless every
// variable they read is known to hold a number.
//
// A variable holds a number when the line has set it to an integer
// literal (i=0, or arithmetic such as ((i=0)) and i++ on such a variable)
// on a path that always runs before the read, and has never set it to
// anything else. The walk follows execution order; values set inside a
// subshell, a pipeline, a branch (&&, ||, if, case), a loop body or a
// function are forgotten after it, while a value that is not a number
// taints the name for the rest of the walk. A variable the line never sets
// comes from the environment (settings "env" can put text there) and is
// not trusted. Arithmetic that reads only literals gets no note; reading a
// numeric variable is a Caution (the line is not read-only).

// specialNumeric are parameters that always expand to a number.
var specialNumeric = map[string]bool{"#": true, "?": true, "$": true, "!": true,
	"RANDOM": true, "SRANDOM": true, "SECONDS": true, "LINENO": true, "BASHPID": true, "PPID": true,
	"UID": true, "EUID": true, "EPOCHSECONDS": true, "BASH_SUBSHELL": true}

// scoped walks f and then forgets the numeric values it set.
func (a *analyzer) scoped(f func()) {
	saved := maps.Clone(a.numeric)
	f()
	a.numeric = saved
	for name := range a.tainted {
		delete(a.numeric, name)
	}
}

// setNumeric records that name now holds a number (unless it was ever
// set to something else).
func (a *analyzer) setNumeric(name string) {
	if !a.tainted[name] {
		a.numeric[name] = true
	}
}

// taint records that name was set to something other than a number.
func (a *analyzer) taint(name string) {
	a.tainted[name] = true
	delete(a.numeric, name)
}

func (a *analyzer) hiddenArith(format string, args ...any) {
	a.note(Hidden, format+"; arithmetic evaluation runs any command substitution hidden in a variable's value", args...)
}

// arith walks an arithmetic expression evaluated in a context described
// by what ("$((...))", "an array subscript"). It reports whether the
// result is known to be a number computed from safe values.
func (a *analyzer) arith(x syntax.ArithmExpr, what string) bool {
	switch e := x.(type) {
	case nil:
		return true
	case *syntax.BinaryArithm:
		if assignArithOp(e.Op) {
			safe := a.arith(e.Y, what)
			name := arithName(e.X)
			if name == "" {
				a.arith(e.X, what) // a[i]=..: the subscript is evaluated
				return safe
			}
			if e.Op != syntax.Assgn {
				safe = a.arithVar(name, what) && safe
			}
			if safe {
				a.setNumeric(name)
			} else {
				a.taint(name)
			}
			return safe
		}
		x, y := a.arith(e.X, what), a.arith(e.Y, what)
		return x && y
	case *syntax.UnaryArithm:
		if e.Op == syntax.Inc || e.Op == syntax.Dec {
			if name := arithName(e.X); name != "" {
				return a.arithVar(name, what)
			}
		}
		return a.arith(e.X, what)
	case *syntax.ParenArithm:
		return a.arith(e.X, what)
	case *syntax.Word:
		return a.arithWord(e, what)
	}
	a.hiddenArith("%s uses arithmetic the analysis does not know", what)
	return false
}

func assignArithOp(op syntax.BinAritOperator) bool {
	switch op {
	case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn, syntax.RemAssgn,
		syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn, syntax.ShrAssgn:
		return true
	}
	return false
}

// arithName returns the variable an arithmetic operand names bare ("x"),
// or "".
func arithName(x syntax.ArithmExpr) string {
	w, ok := x.(*syntax.Word)
	if !ok || len(w.Parts) != 1 {
		return ""
	}
	if l, ok := w.Parts[0].(*syntax.Lit); ok && IsName(l.Value) {
		return l.Value
	}
	return ""
}

// arithWord checks one operand: a number, a variable name, or an
// expansion whose value is evaluated in turn.
func (a *analyzer) arithWord(w *syntax.Word, what string) bool {
	if len(w.Parts) == 1 {
		switch p := w.Parts[0].(type) {
		case *syntax.Lit:
			switch {
			case numericLiteral(p.Value):
				return true
			case IsName(p.Value):
				return a.arithVar(p.Value, what)
			}
		case *syntax.ParamExp:
			if p.Param != nil && plainParam(p) {
				return a.arithVar(p.Param.Value, what)
			}
			a.paramExp(p)
			if p.Length && p.Index == nil && !p.Excl {
				return true // ${#x} is a number
			}
		case *syntax.ArithmExp:
			return a.arith(p.X, "$((...))")
		}
	}
	a.substitutions(w)
	a.hiddenArith("%s evaluates %s as arithmetic", what, printNode(w))
	return false
}

// plainParam reports ${x} or $x: nothing but the name.
func plainParam(p *syntax.ParamExp) bool {
	return !p.Excl && !p.Length && p.Index == nil && p.Slice == nil && p.Repl == nil && p.Exp == nil && p.Names == 0
}

// arithVar checks a variable read in arithmetic.
func (a *analyzer) arithVar(name, what string) bool {
	if (a.numeric[name] || specialNumeric[name] || isDigits(name)) && !a.tainted[name] {
		if !isDigits(name) {
			a.note(Caution, "arithmetic evaluation can run commands hidden in variables")
		}
		return true
	}
	a.hiddenArith("%s evaluates the variable %s, which the line does not set to a number", what, name)
	return false
}

// numericLiteral reports integer constants: 42, 0x1f, 017, 2#101.
func numericLiteral(s string) bool {
	if s == "" {
		return false
	}
	if base, digits, ok := strings.Cut(s, "#"); ok {
		return isDigits(base) && digits != "" && strings.Trim(digits, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ@_") == ""
	}
	if rest, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		return rest != "" && strings.Trim(rest, "0123456789abcdef") == ""
	}
	return isDigits(s)
}

// paramExp checks a parameter expansion: subscripts, substring offsets,
// indirection and @P evaluate text, and its other parts may hold
// substitutions.
func (a *analyzer) paramExp(p *syntax.ParamExp) {
	if p.Excl && p.Names == 0 && !allIndex(p.Index) {
		a.note(Hidden, "${!%s} expands the variable named by the value of %s, whose subscript may run a command", paramName(p), paramName(p))
	}
	if p.Index != nil && !allIndex(p.Index) {
		a.arith(p.Index, "an array subscript")
	}
	if p.Slice != nil {
		a.arith(p.Slice.Offset, "a substring offset")
		a.arith(p.Slice.Length, "a substring length")
	}
	if p.Repl != nil {
		a.substitutions(p.Repl.Orig)
		a.substitutions(p.Repl.With)
	}
	if p.Exp != nil {
		if p.Exp.Op == syntax.OtherParamOps {
			if p.Exp.Word != nil && strings.Contains(p.Exp.Word.Lit(), "P") {
				a.note(Hidden, "${%s@P} expands the value of %s as a prompt, which runs its command substitutions", paramName(p), paramName(p))
			} else {
				a.note(Caution, "${var@op} can expand text as a prompt or command")
			}
		}
		a.substitutions(p.Exp.Word)
	}
}

func paramName(p *syntax.ParamExp) string {
	if p.Param == nil {
		return "?"
	}
	return p.Param.Value
}

// allIndex reports the subscripts @ and * (every element).
func allIndex(x syntax.ArithmExpr) bool {
	w, ok := x.(*syntax.Word)
	return ok && (w.Lit() == "@" || w.Lit() == "*")
}

// nameArg checks a word a builtin takes as a variable name (read x,
// printf -v x, unset x, [[ -v x ]]): a subscript in it is evaluated. It
// returns the plain name, or "".
func (a *analyzer) nameArg(w Word, builtin string) string {
	if !w.Static() && !w.Glob {
		a.note(Hidden, "%s takes a variable name only known at run time, whose subscript may run a command", builtin)
		return ""
	}
	name, sub, ok := strings.Cut(w.Value, "[")
	if !ok {
		return name
	}
	sub = strings.TrimSuffix(sub, "]")
	if !numericLiteral(sub) && sub != "@" && sub != "*" {
		a.note(Hidden, "%s evaluates the subscript of %s, which may run a command", builtin, w.Value)
	}
	return ""
}

// testExpr walks a [[ ]] expression: -eq and the other numeric
// comparisons evaluate their operands as arithmetic, -v evaluates a
// subscript.
func (a *analyzer) testExpr(x syntax.TestExpr) {
	switch e := x.(type) {
	case *syntax.BinaryTest:
		switch e.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			a.arithTest(e.X)
			a.arithTest(e.Y)
			return
		}
		a.testExpr(e.X)
		a.testExpr(e.Y)
	case *syntax.UnaryTest:
		if e.Op == syntax.TsVarSet || e.Op == syntax.TsRefVar {
			if w, ok := e.X.(*syntax.Word); ok {
				a.substitutions(w)
				for _, f := range a.fields(w) {
					a.nameArg(f, "[[ -v ]]")
				}
				return
			}
		}
		a.testExpr(e.X)
	case *syntax.ParenTest:
		a.testExpr(e.X)
	case *syntax.Word:
		a.substitutions(e)
	}
}

func (a *analyzer) arithTest(x syntax.TestExpr) {
	if w, ok := x.(*syntax.Word); ok {
		a.arithWord(w, "[[ ]] with a numeric comparison")
		return
	}
	a.testExpr(x)
}
