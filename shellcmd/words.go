package shellcmd

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// fields expands a word without running anything: quote removal, brace and
// tilde expansion. A word with expansions is one dynamic word.
func (a *analyzer) fields(w *syntax.Word) []Word {
	dyn := []Word{{Dynamic: true, src: w}}
	if a.nwords > maxFields || !a.static(w) {
		return dyn // past the limit (reported when it was crossed) or dynamic
	}
	n := braceFields(w)
	switch {
	case n > maxFields:
		a.note(Unknown, "brace expansion produces more than %d words", maxFields)
		return dyn
	case a.nwords+n > maxFields:
		a.note(Unknown, "the command has more than %d words after brace expansion", maxFields)
		a.nwords = maxFields + 1
		return dyn
	}
	fs, err := expand.Fields(a.expand, w)
	if err != nil || len(fs) == 0 {
		return dyn
	}
	a.nwords += len(fs)
	for _, f := range fs {
		a.nbytes += len(f)
	}
	if a.nbytes > maxParsed {
		a.note(Unknown, "the command expands to more than %d bytes of words", maxParsed)
		a.nwords = maxFields + 1
		return dyn
	}
	glob := hasUnquotedGlob(w)
	out := make([]Word, len(fs))
	for i, f := range fs {
		out[i] = Word{Value: f, Glob: glob}
	}
	return out
}

// literal expands an assignment's value, which Bash neither splits nor
// brace-expands nor globs.
func (a *analyzer) literal(w *syntax.Word) Word {
	if !a.static(w) {
		return Word{Dynamic: true, src: w}
	}
	if a.nwords++; a.nwords > maxFields {
		a.note(Unknown, "the command has more than %d words after brace expansion", maxFields)
		return Word{Dynamic: true, src: w}
	}
	v, err := expand.Literal(a.expand, w)
	if a.nbytes += len(v); err != nil || a.nbytes > maxParsed {
		return Word{Dynamic: true, src: w}
	}
	return Word{Value: v}
}

// hasUnquotedGlob reports whether w has *, ? or a [...] class outside
// quotes.
func hasUnquotedGlob(w *syntax.Word) bool {
	for _, p := range w.Parts {
		l, ok := p.(*syntax.Lit)
		if !ok {
			continue
		}
		v := l.Value
		for i := 0; i < len(v); i++ {
			switch v[i] {
			case '\\':
				i++
			case '*', '?':
				return true
			case '[':
				if strings.IndexByte(v[i+1:], ']') >= 0 {
					return true
				}
			}
		}
	}
	return false
}

// braceFields bounds how many words brace expansion makes of w (an
// overestimate: nested and sibling braces multiply).
func braceFields(w *syntax.Word) int {
	cp := *w
	cp.Parts = append([]syntax.WordPart(nil), w.Parts...)
	if !syntax.SplitBraces(&cp) {
		return 1
	}
	return braceProduct(cp.Parts)
}

// braceProduct multiplies the sizes of the brace expressions in parts
// (syntax.Walk does not visit BraceExp nodes, so this walks by hand).
func braceProduct(parts []syntax.WordPart) int {
	n := 1
	for _, p := range parts {
		b, ok := p.(*syntax.BraceExp)
		if !ok {
			continue
		}
		k := len(b.Elems)
		if b.Sequence {
			k = sequenceLen(b)
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

// sequenceLen is the length of {x..y[..step]}, or more than maxFields when
// it cannot be told.
func sequenceLen(b *syntax.BraceExp) int {
	if len(b.Elems) < 2 {
		return maxFields + 1
	}
	from, to := b.Elems[0].Lit(), b.Elems[1].Lit()
	x, err1 := strconv.Atoi(from)
	y, err2 := strconv.Atoi(to)
	if err1 != nil || err2 != nil {
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

// static reports whether w's value is fixed by the text alone, the
// variables of Options.Vars known.
func (a *analyzer) static(w *syntax.Word) bool { return staticIn(w, a.opts.Vars) }

// environ is the environment words expand in: HOME and Options.Vars.
func environ(opts Options) []string {
	env := []string{"HOME=" + opts.Home}
	for k, v := range opts.Vars {
		env = append(env, k+"="+v)
	}
	return env
}

// knownParam reports a plain $NAME or ${NAME} whose value vars holds.
func knownParam(p syntax.WordPart, vars map[string]string) bool {
	pe, ok := p.(*syntax.ParamExp)
	if !ok || !plainParam(pe) || pe.Param == nil {
		return false
	}
	_, ok = vars[pe.Param.Value]
	return ok
}

func staticIn(w *syntax.Word, vars map[string]string) bool {
	for i, p := range w.Parts {
		if knownParam(p, vars) {
			continue
		}
		switch pt := p.(type) {
		case *syntax.Lit:
			// ~user needs the user database: treat as unknown.
			if i == 0 && strings.HasPrefix(pt.Value, "~") && len(pt.Value) > 1 && pt.Value[1] != '/' {
				return false
			}
		case *syntax.SglQuoted:
			// $'\cx' is a control character to Bash (\c@ even ends the
			// word) but stays as written in mvdan.cc/sh: let the shell decide.
			if pt.Dollar && strings.Contains(pt.Value, `\c`) {
				return false
			}
		case *syntax.DblQuoted:
			for _, in := range pt.Parts {
				if _, ok := in.(*syntax.Lit); !ok && !knownParam(in, vars) {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
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
