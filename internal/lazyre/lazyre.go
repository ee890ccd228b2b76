// Package lazyre holds regular expressions that are compiled when first
// used instead of when their package is initialised.
//
// Every package a program links is initialised when it starts, whatever the
// program then does, so a package-level regexp.MustCompile costs every run
// of cohort — `cohort -p` included — its compile time, its heap and the
// pages of the binary its compiler touches, even when the run never checks
// a mailbox name or a tmux pane id. Counted repetitions are the expensive
// part: `{0,127}` compiles to a program of hundreds of instructions (the
// mailbox package's three patterns allocated 230 KB at start-up). A
// lazyre.Regexp compiles on the first call of any method, once, safe for
// concurrent use; the methods are regexp.Regexp's.
//
// An invalid expression panics at its first use rather than at start-up;
// the package's tests reach every pattern they hold.
package lazyre

import (
	"regexp"
	"sync"
)

// Regexp is a regular expression compiled on first use.
type Regexp struct {
	expr string
	once sync.Once
	re   *regexp.Regexp
}

// New returns expr, to be compiled (with regexp.MustCompile) when first
// used.
func New(expr string) *Regexp { return &Regexp{expr: expr} }

// Compiled returns the compiled expression.
func (r *Regexp) Compiled() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.expr) })
	return r.re
}

// String returns the source text, without compiling it.
func (r *Regexp) String() string { return r.expr }

// MatchString is regexp.Regexp.MatchString.
func (r *Regexp) MatchString(s string) bool { return r.Compiled().MatchString(s) }

// Match is regexp.Regexp.Match.
func (r *Regexp) Match(b []byte) bool { return r.Compiled().Match(b) }

// FindString is regexp.Regexp.FindString.
func (r *Regexp) FindString(s string) string { return r.Compiled().FindString(s) }

// FindStringIndex is regexp.Regexp.FindStringIndex.
func (r *Regexp) FindStringIndex(s string) []int { return r.Compiled().FindStringIndex(s) }

// FindStringSubmatch is regexp.Regexp.FindStringSubmatch.
func (r *Regexp) FindStringSubmatch(s string) []string {
	return r.Compiled().FindStringSubmatch(s)
}

// FindStringSubmatchIndex is regexp.Regexp.FindStringSubmatchIndex.
func (r *Regexp) FindStringSubmatchIndex(s string) []int {
	return r.Compiled().FindStringSubmatchIndex(s)
}

// FindAllString is regexp.Regexp.FindAllString.
func (r *Regexp) FindAllString(s string, n int) []string {
	return r.Compiled().FindAllString(s, n)
}

// FindAllStringSubmatch is regexp.Regexp.FindAllStringSubmatch.
func (r *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return r.Compiled().FindAllStringSubmatch(s, n)
}

// FindAllStringSubmatchIndex is regexp.Regexp.FindAllStringSubmatchIndex.
func (r *Regexp) FindAllStringSubmatchIndex(s string, n int) [][]int {
	return r.Compiled().FindAllStringSubmatchIndex(s, n)
}

// FindAllStringIndex is regexp.Regexp.FindAllStringIndex.
func (r *Regexp) FindAllStringIndex(s string, n int) [][]int {
	return r.Compiled().FindAllStringIndex(s, n)
}

// ReplaceAllString is regexp.Regexp.ReplaceAllString.
func (r *Regexp) ReplaceAllString(src, repl string) string {
	return r.Compiled().ReplaceAllString(src, repl)
}

// ReplaceAllLiteralString is regexp.Regexp.ReplaceAllLiteralString.
func (r *Regexp) ReplaceAllLiteralString(src, repl string) string {
	return r.Compiled().ReplaceAllLiteralString(src, repl)
}

// ReplaceAllStringFunc is regexp.Regexp.ReplaceAllStringFunc.
func (r *Regexp) ReplaceAllStringFunc(src string, repl func(string) string) string {
	return r.Compiled().ReplaceAllStringFunc(src, repl)
}

// SubexpIndex is regexp.Regexp.SubexpIndex.
func (r *Regexp) SubexpIndex(name string) int { return r.Compiled().SubexpIndex(name) }
