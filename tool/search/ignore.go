package search

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// globRegexp translates a gitignore-style glob into an anchored regexp over
// slash-separated relative paths, the way ripgrep's globset does with
// literal separators: `*` and `?` stay within one path component, `**/`,
// `/**/` and `/**` span components, `[...]` is a class (`[!...]` negated),
// `{a,b}` an alternation and `\` escapes.
func globRegexp(glob string) (string, error) {
	if !utf8.ValidString(glob) {
		return "", fmt.Errorf("invalid glob %q: not valid UTF-8", glob)
	}
	var b strings.Builder
	b.WriteString("^")
	if err := translate(&b, glob, false); err != nil {
		return "", fmt.Errorf("invalid glob %q: %w", glob, err)
	}
	b.WriteString("$")
	return b.String(), nil
}

func translate(b *strings.Builder, g string, inAlt bool) error {
	for i := 0; i < len(g); i++ {
		c := g[i]
		switch {
		case c == '*' && strings.HasPrefix(g[i:], "**"):
			atStart := i == 0 || g[i-1] == '/'
			rest := g[i+2:]
			switch {
			case atStart && rest == "":
				b.WriteString(".*")
			case atStart && strings.HasPrefix(rest, "/"):
				b.WriteString("(?:.*/)?")
				i += 2 // also skip the slash
				continue
			default:
				b.WriteString("[^/]*") // `a**b` is just a star
			}
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			n, err := class(b, g[i:])
			if err != nil {
				return err
			}
			i += n - 1
		case c == '{':
			n, err := alternation(b, g[i:])
			if err != nil {
				return err
			}
			i += n - 1
		case c == '\\':
			if i+1 == len(g) {
				return fmt.Errorf("dangling escape")
			}
			i++
			b.WriteString(regexp.QuoteMeta(g[i : i+1]))
		case inAlt && (c == ',' || c == '}'):
			return fmt.Errorf("unexpected %q", c)
		default:
			b.WriteString(regexp.QuoteMeta(g[i : i+1]))
		}
	}
	return nil
}

// class translates the character class at the start of g and returns its
// length in g.
func class(b *strings.Builder, g string) (int, error) {
	i := 1
	negate := false
	if i < len(g) && (g[i] == '!' || g[i] == '^') {
		negate = true
		i++
	}
	var body strings.Builder
	first := true
	for ; i < len(g); i++ {
		c := g[i]
		if c == ']' && !first {
			if negate {
				b.WriteString("[^/")
			} else {
				b.WriteString("[")
			}
			b.WriteString(body.String())
			b.WriteString("]")
			return i + 1, nil
		}
		first = false
		switch c {
		case '\\', '[', ']', '^':
			body.WriteByte('\\')
			body.WriteByte(c)
		default:
			body.WriteByte(c)
		}
	}
	return 0, fmt.Errorf("unclosed character class")
}

// alternation translates the {a,b} group at the start of g and returns its
// length in g.
func alternation(b *strings.Builder, g string) (int, error) {
	depth := 0
	var parts []string
	start := 1
	for i := 0; i < len(g); i++ {
		switch g[i] {
		case '\\':
			i++
		case '[':
			for i < len(g) && g[i] != ']' {
				i++
			}
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				parts = append(parts, g[start:i])
				b.WriteString("(?:")
				for k, p := range parts {
					if k > 0 {
						b.WriteString("|")
					}
					if err := translate(b, p, false); err != nil {
						return 0, err
					}
				}
				b.WriteString(")")
				return i + 1, nil
			}
		case ',':
			if depth == 1 {
				parts = append(parts, g[start:i])
				start = i + 1
			}
		}
	}
	return 0, fmt.Errorf("unclosed alternation")
}

// decision is what a set of rules says about a path.
type decision int

const (
	undecided decision = iota
	ignored
	whitelisted
)

// rule is one line of an ignore file (or one --glob).
type rule struct {
	re      *regexp.Regexp
	negate  bool
	dirOnly bool
}

// rules are the lines of one ignore file, matched against paths relative
// to the directory holding it.
type rules []rule

// parseRules reads gitignore syntax. Lines that do not translate are
// skipped, as git and ripgrep skip them.
func parseRules(data []byte) rules {
	var rs rules
	for _, line := range bytes.Split(data, []byte("\n")) {
		if r, ok := parseRule(string(line)); ok {
			rs = append(rs, r)
		}
	}
	return rs
}

func parseRule(line string) (rule, bool) {
	line = strings.TrimSuffix(line, "\r")
	if strings.HasPrefix(line, "#") {
		return rule{}, false
	}
	if !strings.HasSuffix(line, `\ `) {
		line = strings.TrimRight(line, " \t")
	}
	if line == "" {
		return rule{}, false
	}
	var r rule
	switch {
	case strings.HasPrefix(line, "!"):
		r.negate = true
		line = line[1:]
	case strings.HasPrefix(line, `\!`), strings.HasPrefix(line, `\#`):
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") && !strings.HasSuffix(line, `\/`) {
		r.dirOnly = true
		line = strings.TrimSuffix(line, "/")
	}
	anchored := false
	if strings.HasPrefix(line, "/") {
		anchored = true
		line = line[1:]
	}
	if line == "" {
		return rule{}, false
	}
	if !anchored && !strings.Contains(line, "/") && !strings.HasPrefix(line, "**/") {
		line = "**/" + line
	}
	if strings.HasSuffix(line, "/**") {
		line += "/*" // everything inside, not the directory itself
	}
	src, err := globRegexp(line)
	if err != nil {
		return rule{}, false
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return rule{}, false
	}
	r.re = re
	return r, true
}

// match returns the decision of the last rule matching rel.
func (rs rules) match(rel string, isDir bool) decision {
	for i := len(rs) - 1; i >= 0; i-- {
		r := rs[i]
		if r.dirOnly && !isDir {
			continue
		}
		if r.re.MatchString(rel) {
			if r.negate {
				return whitelisted
			}
			return ignored
		}
	}
	return undecided
}

// overrides are Grep's glob filters with ripgrep's --glob semantics: a
// plain glob includes, a `!glob` excludes, the last match wins, a match
// beats every other filter, and when any include glob exists a file that
// matches none is excluded.
type overrides struct {
	rules      rules
	includes   int
	configured bool
}

func newOverrides(globs []string) (overrides, error) {
	var o overrides
	for _, g := range globs {
		o.configured = true
		r, ok := parseRule(g)
		if !ok {
			return o, fmt.Errorf("invalid glob %q", g)
		}
		// In an override, a plain glob whitelists and `!` ignores: the
		// reverse of an ignore file.
		r.negate = !r.negate
		if r.negate {
			o.includes++
		}
		o.rules = append(o.rules, r)
	}
	return o, nil
}

func (o overrides) match(rel string, isDir bool) decision {
	if !o.configured {
		return undecided
	}
	if d := o.rules.match(rel, isDir); d != undecided {
		return d
	}
	if o.includes > 0 && !isDir {
		return ignored
	}
	return undecided
}
