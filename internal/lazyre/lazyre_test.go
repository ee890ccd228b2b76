package lazyre

import (
	"regexp"
	"slices"
	"sync"
	"testing"
)

// TestNotCompiledUntilUsed: New compiles nothing, even for an expression
// that does not compile; the first method call does, and panics as
// regexp.MustCompile does.
func TestNotCompiledUntilUsed(t *testing.T) {
	bad := New(`a{2,1}`)
	if bad.re != nil {
		t.Fatal("New compiled its expression")
	}
	if got := bad.String(); got != `a{2,1}` {
		t.Errorf("String() = %q", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("an invalid expression did not panic at its first use")
		}
	}()
	bad.MatchString("a")
}

// TestMethodsMatchRegexp: every method answers as regexp.Regexp's does.
func TestMethodsMatchRegexp(t *testing.T) {
	const expr = `(?P<word>[a-z]+)(\d*)`
	l, r := New(expr), regexp.MustCompile(expr)
	const s = "ab12 cd ef3"
	checks := []struct {
		name      string
		got, want any
	}{
		{"MatchString", l.MatchString(s), r.MatchString(s)},
		{"Match", l.Match([]byte("12")), r.Match([]byte("12"))},
		{"FindString", l.FindString(s), r.FindString(s)},
		{"FindStringIndex", l.FindStringIndex(s), r.FindStringIndex(s)},
		{"FindStringSubmatch", l.FindStringSubmatch(s), r.FindStringSubmatch(s)},
		{"FindStringSubmatchIndex", l.FindStringSubmatchIndex(s), r.FindStringSubmatchIndex(s)},
		{"FindAllString", l.FindAllString(s, -1), r.FindAllString(s, -1)},
		{"FindAllStringIndex", l.FindAllStringIndex(s, 2), r.FindAllStringIndex(s, 2)},
		{"FindAllStringSubmatch", l.FindAllStringSubmatch(s, -1), r.FindAllStringSubmatch(s, -1)},
		{"FindAllStringSubmatchIndex", l.FindAllStringSubmatchIndex(s, -1), r.FindAllStringSubmatchIndex(s, -1)},
		{"ReplaceAllString", l.ReplaceAllString(s, "<$word>"), r.ReplaceAllString(s, "<$word>")},
		{"ReplaceAllLiteralString", l.ReplaceAllLiteralString(s, "$word"), r.ReplaceAllLiteralString(s, "$word")},
		{"ReplaceAllStringFunc", l.ReplaceAllStringFunc(s, func(w string) string { return w + "!" }), r.ReplaceAllStringFunc(s, func(w string) string { return w + "!" })},
		{"SubexpIndex", l.SubexpIndex("word"), r.SubexpIndex("word")},
		{"String", l.String(), r.String()},
	}
	for _, c := range checks {
		if !equal(c.got, c.want) {
			t.Errorf("%s = %v, regexp says %v", c.name, c.got, c.want)
		}
	}
}

func equal(a, b any) bool {
	switch a := a.(type) {
	case []string:
		return slices.Equal(a, b.([]string))
	case []int:
		return slices.Equal(a, b.([]int))
	case [][]string:
		return slices.EqualFunc(a, b.([][]string), slices.Equal)
	case [][]int:
		return slices.EqualFunc(a, b.([][]int), slices.Equal)
	}
	return a == b
}

// TestConcurrentFirstUse: goroutines racing to the first use all get the
// same compiled expression (run with -race).
func TestConcurrentFirstUse(t *testing.T) {
	l := New(`^[a-z]{0,63}$`)
	var wg sync.WaitGroup
	got := make([]*regexp.Regexp, 8)
	for i := range got {
		wg.Go(func() {
			if !l.MatchString("abc") {
				t.Error("no match")
			}
			got[i] = l.Compiled()
		})
	}
	wg.Wait()
	for _, re := range got {
		if re != got[0] || re == nil {
			t.Fatal("the expression was compiled more than once")
		}
	}
}
