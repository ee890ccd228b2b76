package permission

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// bashPattern is a compiled Bash rule specifier. Most specifiers are one
// simple command ("git diff", "npm run test") compared word by word with
// the parsed command, so quoting and spacing do not matter. A specifier
// that is not one simple command of literal words ("ls | wc", "echo $HOME")
// is kept as text and compared with the whole command line.
type bashPattern struct {
	raw     string // the specifier without its ":*" suffix
	prefix  bool   // ":*" or a trailing " *": further words may follow
	words   []wordPat
	rawOnly bool
}

// wordPat matches one word, or with any set, zero or more whole words.
type wordPat struct {
	any  bool
	segs []seg
}

// seg is literal text or, with star set, any run of characters.
type seg struct {
	text string
	star bool
}

func compileBash(spec string) (*bashPattern, error) {
	s := strings.TrimSpace(spec)
	p := &bashPattern{}
	if rest, ok := strings.CutSuffix(s, ":*"); ok {
		p.prefix, s = true, strings.TrimSpace(rest)
	}
	if strings.Contains(s, ":*") {
		return nil, errors.New(`":*" is only allowed at the end, as in Bash(git diff:*)`)
	}
	if s == "" {
		return nil, errors.New("missing command before :*")
	}
	p.raw = s
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(s), "")
	if err != nil {
		return nil, fmt.Errorf("not a valid shell command: %v", err)
	}
	call := singleCall(f)
	if call == nil {
		p.rawOnly = true
		return p, nil
	}
	for _, w := range call.Args {
		wp, ok := wordPattern(w)
		if !ok {
			p.words, p.rawOnly = nil, true
			return p, nil
		}
		p.words = append(p.words, wp)
	}
	// A trailing lone "*" is the newer spelling of ":*".
	for len(p.words) > 1 && p.words[len(p.words)-1].any {
		p.words = p.words[:len(p.words)-1]
		p.prefix = true
	}
	if len(p.words) == 1 && p.words[0].any {
		return nil, errors.New(`"*" alone is not a command; write Bash to cover every command`)
	}
	return p, nil
}

// singleCall returns the only statement of f when it is a plain simple
// command without assignments or redirections.
func singleCall(f *syntax.File) *syntax.CallExpr {
	if len(f.Stmts) != 1 {
		return nil
	}
	st := f.Stmts[0]
	if st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0 {
		return nil
	}
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || len(call.Args) == 0 {
		return nil
	}
	return call
}

// wordPattern converts a rule word: quotes removed, unquoted "*" a
// wildcard. ok is false for words with expansions.
func wordPattern(w *syntax.Word) (wordPat, bool) {
	var wp wordPat
	lit := func(s string) {
		if n := len(wp.segs); n > 0 && !wp.segs[n-1].star {
			wp.segs[n-1].text += s
			return
		}
		wp.segs = append(wp.segs, seg{text: s})
	}
	for _, part := range w.Parts {
		switch pt := part.(type) {
		case *syntax.Lit:
			v := pt.Value
			for i := 0; i < len(v); i++ {
				switch {
				case v[i] == '\\' && i+1 < len(v):
					i++
					lit(v[i : i+1])
				case v[i] == '*':
					wp.segs = append(wp.segs, seg{star: true})
				default:
					lit(v[i : i+1])
				}
			}
		case *syntax.SglQuoted:
			if pt.Dollar {
				return wp, false
			}
			lit(pt.Value)
		case *syntax.DblQuoted:
			for _, in := range pt.Parts {
				l, ok := in.(*syntax.Lit)
				if !ok {
					return wp, false
				}
				lit(unescapeDouble(l.Value))
			}
		default:
			return wp, false
		}
	}
	if len(w.Parts) == 1 && len(wp.segs) == 1 && wp.segs[0].star {
		if l, ok := w.Parts[0].(*syntax.Lit); ok && l.Value == "*" {
			wp.any = true
		}
	}
	return wp, true
}

// unescapeDouble removes the backslashes that are special inside "...".
func unescapeDouble(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// matchWords reports whether a command's words match the pattern. A
// dynamic word (dynWord) matches only a wildcard when broad is false (an
// allow rule must be sure); when broad is set (deny and ask rules) it may
// stand for any number of words in argument position, since "rm $flags x"
// could be anything.
func (p *bashPattern) matchWords(words []string, broad bool) bool {
	if p.rawOnly {
		return false
	}
	pats := p.words
	if p.prefix {
		pats = append(append([]wordPat(nil), pats...), wordPat{any: true})
	}
	// ok[i][j]: pats[:i] match words[:j].
	ok := make([][]bool, len(pats)+1)
	for i := range ok {
		ok[i] = make([]bool, len(words)+1)
	}
	ok[0][0] = true
	for i := 0; i <= len(pats); i++ {
		for j := 0; j <= len(words); j++ {
			if i == 0 && j == 0 {
				continue
			}
			var w string
			if j > 0 {
				w = words[j-1]
			}
			dyn := j > 1 && broad && w == dynWord
			glob := j > 1 && broad && isGlob(w)
			v := false
			if i > 0 && pats[i-1].any {
				v = ok[i-1][j] || (j > 0 && ok[i][j-1])
			} else if i > 0 && j > 0 && ok[i-1][j-1] {
				v = dyn || (glob && globCouldBe(w, pats[i-1])) || (w != dynWord && globSegs(pats[i-1].segs, plain(w)))
			}
			if dyn {
				// The dynamic word may expand to nothing or to several words.
				v = v || ok[i][j-1] || (i > 0 && ok[i-1][j])
			}
			if glob && i > 0 && !pats[i-1].any && ok[i-1][j] && globCouldBe(w, pats[i-1]) {
				v = true // a glob may expand to several words
			}
			ok[i][j] = v
		}
	}
	return ok[len(pats)][len(words)]
}

// globCouldBe reports whether a glob word could expand to a word the
// pattern word matches (a file of that name may exist when it runs).
func globCouldBe(glob string, wp wordPat) bool {
	var lit strings.Builder
	for _, sg := range wp.segs {
		if sg.star {
			return true
		}
		lit.WriteString(sg.text)
	}
	m, err := filepath.Match(plain(glob), lit.String())
	return m || err != nil
}

// hasWildcard reports whether the pattern accepts extra words.
func (p *bashPattern) hasWildcard() bool {
	if p.prefix {
		return true
	}
	for _, w := range p.words {
		if w.any {
			return true
		}
	}
	return false
}

// matchLine compares a text-only pattern with the whole command line.
// Prefix matching is only used when broad is set (deny and ask rules):
// text after a prefix could contain another command.
func (p *bashPattern) matchLine(line string, broad bool) bool {
	line = strings.TrimSpace(line)
	return line == p.raw || (broad && p.prefix && strings.HasPrefix(line, p.raw))
}

// globSegs matches s against literal segments and '*' wildcards.
func globSegs(segs []seg, s string) bool {
	// Classic greedy wildcard matching with backtracking to the last star.
	si, pi := 0, 0
	starPi, starSi := -1, 0
	// Flatten into runes of pattern: literal bytes and star markers.
	type tok struct {
		c    byte
		star bool
	}
	var pat []tok
	for _, sg := range segs {
		if sg.star {
			pat = append(pat, tok{star: true})
			continue
		}
		for i := 0; i < len(sg.text); i++ {
			pat = append(pat, tok{c: sg.text[i]})
		}
	}
	for si < len(s) {
		switch {
		case pi < len(pat) && !pat[pi].star && pat[pi].c == s[si]:
			pi++
			si++
		case pi < len(pat) && pat[pi].star:
			starPi, starSi = pi, si
			pi++
		case starPi >= 0:
			starSi++
			si = starSi
			pi = starPi + 1
		default:
			return false
		}
	}
	for pi < len(pat) && pat[pi].star {
		pi++
	}
	return pi == len(pat)
}
