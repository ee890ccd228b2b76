package permission

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// fields expands a word without running anything: quote removal, brace
// and tilde expansion. A word with expansions yields dynWord.
func (a *analyzer) fields(w *syntax.Word) []string {
	if !staticWord(w) {
		return []string{dynWord}
	}
	if n := braceFields(w); n > maxFields || a.nwords+n > maxFields {
		if !a.tooMany {
			a.tooMany = true
			a.opaque("brace expansion produces more than %d words", maxFields)
		}
		return []string{dynWord}
	}
	cfg := &expand.Config{Env: expand.ListEnviron("HOME=" + a.home)}
	fs, err := expand.Fields(cfg, w)
	if err != nil || len(fs) == 0 {
		return []string{dynWord}
	}
	a.nwords += len(fs)
	if hasUnquotedGlob(w) {
		for i := range fs {
			fs[i] = globMark + fs[i]
		}
	}
	return fs
}

// globMark prefixes a word holding unquoted glob characters: when the
// command runs, the shell replaces it with the names it matches, which may
// be anything a file can be called (including "-rf" or "--output=x").
const globMark = "\x01"

func isGlob(w string) bool { return strings.HasPrefix(w, globMark) }

// plain returns a word without its glob mark.
func plain(w string) string { return strings.TrimPrefix(w, globMark) }

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
		if len(from) == 1 && len(to) == 1 {
			x, y = int(from[0]), int(to[0])
		} else {
			return maxFields + 1
		}
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

// staticWord reports whether w's value is fixed by the text alone.
func staticWord(w *syntax.Word) bool {
	for i, p := range w.Parts {
		switch pt := p.(type) {
		case *syntax.Lit:
			// ~user needs the user database: treat as unknown.
			if i == 0 && strings.HasPrefix(pt.Value, "~") && len(pt.Value) > 1 && pt.Value[1] != '/' {
				return false
			}
		case *syntax.SglQuoted:
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
