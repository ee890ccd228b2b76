package web

import (
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestHTMLText(t *testing.T) {
	base, _ := url.Parse("https://example.com/docs/page.html")
	tests := []struct {
		name, in, want string
	}{
		{"paragraphs and inline", "<p>Hello <b>big</b>\n   world.</p><p>Second&nbsp;one &amp; more</p>",
			"Hello big world.\n\nSecond one & more"},
		{"title and headings", "<html><head><title> My  Page </title><style>p{}</style></head><body><h1>Top</h1><p>x</p><h3>Sub</h3>y</body></html>",
			"Title: My Page\n\n# Top\n\nx\n\n### Sub\n\ny"},
		{"scripts and styles dropped", `<p>a</p><script>var s = "<p>no</p>";</script><style>.x{}</style><noscript>no</noscript><p>b</p>`,
			"a\n\nb"},
		{"links resolved", `See <a href="../api/x.html">the API</a>, <a href="https://other.org/">other</a>, <a href="#top">top</a> and <a href="javascript:go()">js</a>.`,
			"See [the API](https://example.com/api/x.html), [other](https://other.org/), top and js."},
		{"lists", "<ul><li>one</li><li>two<ul><li>deep</li></ul></li></ul><ol><li>first</li><li>second</li></ol>",
			"- one\n- two\n\n  - deep\n\n1. first\n2. second"},
		{"pre and code", "<p>Run <code>go test</code> now.</p><pre>line 1\n  line 2</pre>",
			"Run `go test` now.\n\n```\nline 1\n  line 2\n```"},
		{"table", "<table><tr><th>A</th><th>B</th></tr><tr><td>1</td><td>2</td></tr></table>",
			"A | B\n1 | 2"},
		{"line breaks and rules", "a<br>b<hr>c", "a\nb\n\n---\n\nc"},
		{"comments and doctype", "<!DOCTYPE html><!-- <p>hidden</p> --><p>shown</p>", "shown"},
		{"attributes with >", `<a title="a > b" href="/x">go</a>`, "[go](https://example.com/x)"},
		{"image alt", `<p>Logo: <img src="l.png" alt="Cohort"></p>`, "Logo: [image: Cohort]"},
		{"uppercase tags", "<P>One</P><SCRIPT>x</SCRIPT><P>Two</P>", "One\n\nTwo"},
		{"stray less-than", "a < b and 3<4", "a < b and 3<4"},
		{"unclosed", "<p>text<div", "text"},
		{"nested skipped", "<svg><svg></svg><text>no</text></svg>after", "after"},
		{"entities", "&lt;tag&gt; &#169; &eacute;", "<tag> © é"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, htmlText(tt.in, base)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzHTMLText(f *testing.F) {
	for _, s := range []string{
		"<p>a</p>", "<a href='x'>y", "<!--", "<script>", "<", "</", "<pre><code>x</pre>", "<ol><li><ol><li>",
		"<table><td>a<td>b</table>", `<a href="%zz">x</a>`, "<title>",
	} {
		f.Add(s)
	}
	base, _ := url.Parse("https://example.com/")
	f.Fuzz(func(t *testing.T, doc string) {
		out := htmlText(doc, base)
		if strings.Contains(out, "\n\n\n") {
			t.Errorf("three newlines in %q", out)
		}
	})
}
