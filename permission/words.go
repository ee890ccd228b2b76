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
	return fs
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
