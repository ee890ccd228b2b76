package search

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGlobRegexp(t *testing.T) {
	tests := []struct {
		glob    string
		match   []string
		noMatch []string
	}{
		{"*.go", []string{"a.go", ".x.go"}, []string{"a/b.go", "a.gox"}},
		{"**/*.go", []string{"a.go", "a/b.go", "a/b/c.go"}, []string{"a.gox"}},
		{"a/**/b", []string{"a/b", "a/x/b", "a/x/y/b"}, []string{"ab", "a/xb"}},
		{"a/**", []string{"a/x", "a/x/y"}, []string{"a", "b/x"}},
		{"**", []string{"a", "a/b"}, nil},
		{"a**b", []string{"ab", "axxb"}, []string{"a/b"}},
		{"?.txt", []string{"a.txt"}, []string{"ab.txt", "/.txt"}},
		{"[abc].go", []string{"a.go", "c.go"}, []string{"d.go"}},
		{"[!abc].go", []string{"d.go"}, []string{"a.go", "/.go"}},
		{"[]x].go", []string{"].go", "x.go"}, []string{"y.go"}},
		{"*.{ts,tsx}", []string{"a.ts", "a.tsx"}, []string{"a.t", "a.js"}},
		{"{src,lib}/**/*.{c,h}", []string{"src/a.c", "lib/x/y.h"}, []string{"doc/a.c"}},
		{`\*.go`, []string{"*.go"}, []string{"a.go"}},
		{"a.b+c(d)", []string{"a.b+c(d)"}, []string{"aXb+c(d)"}},
	}
	for _, tt := range tests {
		src, err := globRegexp(tt.glob)
		if err != nil {
			t.Errorf("%q: %v", tt.glob, err)
			continue
		}
		re := regexp.MustCompile(src)
		for _, m := range tt.match {
			if !re.MatchString(m) {
				t.Errorf("%q (%s) does not match %q", tt.glob, src, m)
			}
		}
		for _, m := range tt.noMatch {
			if re.MatchString(m) {
				t.Errorf("%q (%s) matches %q", tt.glob, src, m)
			}
		}
	}
	for _, bad := range []string{"[abc", "{a,b", `x\`} {
		if _, err := globRegexp(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestRules(t *testing.T) {
	rs := parseRules([]byte(strings.Join([]string{
		"# comment",
		"",
		"*.log",
		"!keep.log",
		"build/",
		"/root-only.txt",
		"docs/*.md",
		`\#hash`,
		`\!bang`,
		"trailing   ",
		"dir/**",
		"crlf\r",
	}, "\n")))
	tests := []struct {
		path  string
		isDir bool
		want  decision
	}{
		{"a.log", false, ignored},
		{"x/y/a.log", false, ignored},
		{"keep.log", false, whitelisted},
		{"x/keep.log", false, whitelisted},
		{"build", true, ignored},
		{"x/build", true, ignored},
		{"build", false, undecided},
		{"root-only.txt", false, ignored},
		{"x/root-only.txt", false, undecided},
		{"docs/a.md", false, ignored},
		{"x/docs/a.md", false, undecided},
		{"docs/x/a.md", false, undecided},
		{"#hash", false, ignored},
		{"!bang", false, ignored},
		{"trailing", false, ignored},
		{"dir", true, undecided},
		{"dir/a", false, ignored},
		{"crlf", false, ignored},
		{"comment", false, undecided},
	}
	for _, tt := range tests {
		if got := rs.match(tt.path, tt.isDir); got != tt.want {
			t.Errorf("match(%q, dir=%v) = %v, want %v", tt.path, tt.isDir, got, tt.want)
		}
	}
}

func TestOverrides(t *testing.T) {
	o, err := newOverrides([]string{"*.go", "!*_test.go"})
	if err != nil {
		t.Fatal(err)
	}
	got := []decision{o.match("a.go", false), o.match("a_test.go", false), o.match("a.py", false), o.match("dir", true)}
	if diff := cmp.Diff([]decision{whitelisted, ignored, ignored, undecided}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	excl, _ := newOverrides([]string{"!vendor"})
	if excl.match("a.py", false) != undecided || excl.match("vendor", true) != ignored {
		t.Errorf("exclude-only overrides wrong")
	}
	if _, err := newOverrides([]string{"[x"}); err == nil {
		t.Errorf("bad glob accepted")
	}
}

func TestSplitGlobs(t *testing.T) {
	tests := map[string][]string{
		"":                   nil,
		"*.go":               {"*.go"},
		"*.ts *.tsx":         {"*.ts", "*.tsx"},
		"*.ts,*.tsx":         {"*.ts", "*.tsx"},
		"*.{ts,tsx} !*.d.ts": {"*.{ts,tsx}", "!*.d.ts"},
		"  a  ,, b ":         {"a", "b"},
	}
	for in, want := range tests {
		if diff := cmp.Diff(want, splitGlobs(in)); diff != "" {
			t.Errorf("splitGlobs(%q) (-want +got):\n%s", in, diff)
		}
	}
}

func TestPaginate(t *testing.T) {
	items := []string{"a", "b", "c", "d", "e"}
	tests := []struct {
		offset, limit int
		want          []string
		note          string
	}{
		{0, 0, items, ""},
		{0, 2, []string{"a", "b"}, "[Showing x 1–2 of 5; use offset=2 to see more.]"},
		{2, 2, []string{"c", "d"}, "[Showing x 3–4 of 5; use offset=4 to see more.]"},
		{3, 10, []string{"d", "e"}, "[Showing x 4–5 of 5.]"},
		{5, 1, nil, "[offset 5 is past the end: there are 5 x.]"},
	}
	for _, tt := range tests {
		got, note := paginate(items, tt.offset, tt.limit, "x")
		if diff := cmp.Diff(tt.want, got); diff != "" || note != tt.note {
			t.Errorf("paginate(%d, %d): note %q; (-want +got):\n%s", tt.offset, tt.limit, note, diff)
		}
	}
}

func FuzzParseRules(f *testing.F) {
	f.Add("*.log\n!keep.log\nbuild/\n/a/**/b\n{x,y}[!z]?\n")
	f.Add(`\!a\#b\ ` + "\n[[]\n{{,}}\n**/**/")
	f.Fuzz(func(t *testing.T, data string) {
		rs := parseRules([]byte(data))
		for _, p := range []string{"a", "a/b.log", "build", ".x"} {
			rs.match(p, false)
			rs.match(p, true)
		}
	})
}

func FuzzGlobRegexp(f *testing.F) {
	for _, s := range []string{"*.go", "a/**/b", "{a,{b,c}}", "[!a-z]", `\{`, "**", "[]]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, glob string) {
		src, err := globRegexp(glob)
		if err != nil {
			return
		}
		if _, err := regexp.Compile(src); err != nil {
			t.Errorf("glob %q gave an invalid regexp %q: %v", glob, src, err)
		}
	})
}
