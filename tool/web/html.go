package web

import (
	"html"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/cohort-dev/cohort/internal/lazyre"
)

// htmlText converts an HTML document to readable, Markdown-flavoured text:
// scripts, styles and other non-content elements are dropped, headings
// become "#" lines, links become [text](absolute URL), list items "- ",
// preformatted blocks are fenced, table cells are joined with " | ", and
// block elements are separated by blank lines. base resolves relative
// links. It never fails: malformed markup degrades to its text.
func htmlText(doc string, base *url.URL) string {
	c := &converter{base: base}
	c.run(doc)
	return c.result()
}

// skipped elements lose their content entirely.
var skipped = map[string]bool{
	"script": true, "style": true, "noscript": true, "template": true, "svg": true, "canvas": true,
	"iframe": true, "object": true, "head": true, "select": true, "math": true,
}

// rawText elements end only at their own end tag.
var rawText = map[string]bool{"script": true, "style": true, "textarea": true, "title": true, "template": true}

// blocks are separated from their surroundings by a blank line.
var blocks = map[string]bool{
	"p": true, "div": true, "section": true, "article": true, "header": true, "footer": true, "main": true,
	"aside": true, "nav": true, "ul": true, "ol": true, "table": true, "blockquote": true, "form": true,
	"figure": true, "figcaption": true, "dl": true, "fieldset": true, "details": true, "summary": true,
	"address": true, "hr": true, "body": true, "html": true,
}

type link struct {
	mark int // output length when the link opened
	href string
}

type converter struct {
	base     *url.URL
	out      []byte
	breaks   int // newlines owed before the next text
	space    bool
	pre      int
	skip     int    // depth inside skipped elements
	skipTag  string // the element being skipped
	title    string
	links    []link
	cells    int // cells written in the current table row
	listKind []string
	listNum  []int
}

func (c *converter) run(doc string) {
	for len(doc) > 0 {
		lt := strings.IndexByte(doc, '<')
		if lt < 0 {
			c.text(doc)
			return
		}
		c.text(doc[:lt])
		doc = doc[lt:]
		switch {
		case strings.HasPrefix(doc, "<!--"):
			doc = after(doc[4:], "-->")
		case strings.HasPrefix(doc, "<!"), strings.HasPrefix(doc, "<?"):
			doc = after(doc, ">")
		case len(doc) > 1 && (doc[1] == '/' || isLetter(doc[1])):
			doc = c.tag(doc)
		default:
			c.text("<")
			doc = doc[1:]
		}
	}
}

// after returns s after the first sep, or "" if there is none.
func after(s, sep string) string {
	if i := strings.Index(s, sep); i >= 0 {
		return s[i+len(sep):]
	}
	return ""
}

func isLetter(b byte) bool { return b|0x20 >= 'a' && b|0x20 <= 'z' }

// tag handles the tag at the start of doc and returns the rest.
func (c *converter) tag(doc string) string {
	end, name, attrs, closing := parseTag(doc)
	rest := doc[end:]
	if closing {
		c.close(name)
		return rest
	}
	if rawText[name] {
		content, tail := untilEndTag(rest, name)
		switch {
		case name == "title" && c.title == "":
			c.title = strings.Join(strings.Fields(html.UnescapeString(content)), " ")
		case name == "textarea" && c.skip == 0:
			c.text(content)
		}
		return tail
	}
	c.open(name, attrs)
	return rest
}

// parseTag reads a tag; end is its length in doc.
func parseTag(doc string) (end int, name, attrs string, closing bool) {
	i := 1
	if doc[i] == '/' {
		closing = true
		i++
	}
	start := i
	for i < len(doc) && !strings.ContainsRune(" \t\r\n/>", rune(doc[i])) {
		i++
	}
	name = strings.ToLower(doc[start:i])
	attrStart := i
	var quote byte
	for ; i < len(doc); i++ {
		ch := doc[i]
		switch {
		case quote != 0:
			if ch == quote {
				quote = 0
			}
		case ch == '"' || ch == '\'':
			quote = ch
		case ch == '>':
			return i + 1, name, doc[attrStart:i], closing
		}
	}
	return len(doc), name, doc[attrStart:], closing
}

// untilEndTag splits doc at the end tag of name (case-insensitive).
func untilEndTag(doc, name string) (content, rest string) {
	for i := 0; ; {
		j := strings.Index(doc[i:], "</")
		if j < 0 {
			return doc, ""
		}
		k := i + j
		if end := k + 2 + len(name); end <= len(doc) && strings.EqualFold(doc[k+2:end], name) {
			return doc[:k], after(doc[k:], ">")
		}
		i = k + 2
	}
}

var attrRe = lazyre.New(`(?is)\b([a-z][a-z0-9_:-]*)\s*=\s*("[^"]*"|'[^']*'|[^\s"'>]+)`)

func attr(attrs, key string) string {
	for _, m := range attrRe.FindAllStringSubmatch(attrs, -1) {
		if strings.EqualFold(m[1], key) {
			return html.UnescapeString(strings.Trim(m[2], `"'`))
		}
	}
	return ""
}

func (c *converter) open(name, attrs string) {
	if c.skip > 0 {
		if name == c.skipTag {
			c.skip++
		}
		return
	}
	if skipped[name] {
		c.skip, c.skipTag = 1, name
		return
	}
	switch {
	case blocks[name]:
		c.block()
		if name == "ul" || name == "ol" {
			c.listKind = append(c.listKind, name)
			c.listNum = append(c.listNum, 0)
		}
		if name == "hr" {
			c.write("---")
			c.block()
		}
	case len(name) == 2 && name[0] == 'h' && name[1] >= '1' && name[1] <= '6':
		c.block()
		c.write(strings.Repeat("#", int(name[1]-'0')) + " ")
	case name == "br":
		c.newline()
	case name == "li":
		c.newline()
		marker := "- "
		if n := len(c.listKind); n > 0 && c.listKind[n-1] == "ol" {
			c.listNum[n-1]++
			marker = itoa(c.listNum[n-1]) + ". "
		}
		c.write(strings.Repeat("  ", max(len(c.listKind)-1, 0)) + marker)
	case name == "tr":
		c.newline()
		c.cells = 0
	case name == "td" || name == "th":
		if c.cells > 0 {
			c.write(" | ")
		}
		c.cells++
	case name == "pre":
		c.block()
		c.write("```")
		c.newline()
		c.pre++
	case name == "code" && c.pre == 0:
		c.word("`")
	case name == "a":
		c.links = append(c.links, link{mark: len(c.out), href: attr(attrs, "href")})
	case name == "img":
		if alt := strings.TrimSpace(attr(attrs, "alt")); alt != "" {
			c.word("[image: " + alt + "]")
		}
	case name == "dt" || name == "dd" || name == "caption":
		c.newline()
	}
}

func (c *converter) close(name string) {
	if c.skip > 0 {
		if name == c.skipTag {
			c.skip--
		}
		return
	}
	switch {
	case blocks[name]:
		if (name == "ul" || name == "ol") && len(c.listKind) > 0 {
			c.listKind = c.listKind[:len(c.listKind)-1]
			c.listNum = c.listNum[:len(c.listNum)-1]
		}
		c.block()
	case len(name) == 2 && name[0] == 'h' && name[1] >= '1' && name[1] <= '6':
		c.block()
	case name == "pre" && c.pre > 0:
		c.pre--
		c.newline()
		c.write("```")
		c.block()
	case name == "code" && c.pre == 0:
		c.write("`")
	case name == "a" && len(c.links) > 0:
		l := c.links[len(c.links)-1]
		c.links = c.links[:len(c.links)-1]
		c.closeLink(l)
	}
}

// closeLink rewrites the text written since the link opened as
// [text](url), for links that lead somewhere.
func (c *converter) closeLink(l link) {
	if l.mark > len(c.out) {
		return
	}
	seg := string(c.out[l.mark:])
	text := strings.TrimSpace(seg)
	lead := seg[:len(seg)-len(strings.TrimLeft(seg, " \n"))]
	href := strings.TrimSpace(l.href)
	if text == "" || href == "" || strings.HasPrefix(href, "#") || strings.HasPrefix(strings.ToLower(href), "javascript:") {
		return
	}
	if u, err := url.Parse(href); err == nil && c.base != nil {
		href = c.base.ResolveReference(u).String()
	}
	c.out = append(c.out[:l.mark], lead+"["+text+"]("+href+")"...)
}

func (c *converter) text(s string) {
	if c.skip > 0 || s == "" {
		return
	}
	s = html.UnescapeString(s)
	if c.pre > 0 {
		c.flushBreaks()
		c.out = append(c.out, s...)
		return
	}
	first, _ := utf8.DecodeRuneInString(s)
	last, _ := utf8.DecodeLastRuneInString(s)
	if isSpace(first) {
		c.space = true
	}
	words := strings.FieldsFunc(s, isSpace)
	for i, w := range words {
		if i > 0 {
			c.space = true
		}
		c.word(w)
	}
	if len(words) > 0 && isSpace(last) {
		c.space = true
	}
}

func isSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' || r == '\u00a0'
}

// word writes inline content, preceded by the pending space if any.
func (c *converter) word(w string) {
	if c.space && c.breaks == 0 && len(c.out) > 0 && c.out[len(c.out)-1] != '\n' {
		c.out = append(c.out, ' ')
	}
	c.space = false
	c.write(w)
}

func (c *converter) write(s string) {
	c.flushBreaks()
	c.out = append(c.out, s...)
}

func (c *converter) flushBreaks() {
	if c.breaks > 0 && len(c.out) > 0 {
		c.out = append(c.out, strings.Repeat("\n", c.breaks)...)
	}
	c.breaks = 0
}

func (c *converter) newline() { c.breaks = max(c.breaks, 1); c.space = false }
func (c *converter) block()   { c.breaks = 2; c.space = false }

var blankLines = lazyre.New(`\n{3,}`)

func (c *converter) result() string {
	body := strings.TrimSpace(blankLines.ReplaceAllString(string(c.out), "\n\n"))
	if c.title != "" {
		return "Title: " + c.title + "\n\n" + body
	}
	return body
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
