// Package clip shortens text for displays, logs and the model without
// cutting a character in two: one helper instead of one per package.
package clip

import "unicode/utf8"

// Ellipsis marks where text was cut.
const Ellipsis = "…"

// String returns s when it is at most n bytes long; otherwise its longest
// prefix of at most n bytes that ends on a character boundary, followed by
// Ellipsis. n < 0 counts as 0.
func String(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return Prefix(s, n) + Ellipsis
}

// Prefix returns the longest prefix of s of at most n bytes that ends on a
// character boundary (s itself when it is short enough).
func Prefix(s string, n int) string {
	if n < 0 {
		n = 0
	}
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// Runes is String counting characters instead of bytes: s when it has at
// most n characters, else its first n followed by Ellipsis.
func Runes(s string, n int) string {
	if n < 0 {
		n = 0
	}
	k := 0
	for i := range s {
		if k == n {
			return s[:i] + Ellipsis
		}
		k++
	}
	return s
}
