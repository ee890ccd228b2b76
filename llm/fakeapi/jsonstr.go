package fakeapi

import (
	"math/rand/v2"
	"unicode/utf16"
	"unicode/utf8"
)

// Writing the JSON strings of the OpenAI protocols' deltas by hand. The
// quirks SplitUTF8 and SplitSurrogates put into a chunk what encoding/json
// would never write: half of a UTF-8 sequence as raw bytes, or one escaped
// half of a surrogate pair. (encoding/json replaces both with U+FFFD, which
// is exactly the corruption a client must not suffer.)

// piece is one fragment of a string as it goes on the wire: its bytes, and
// whether it is UTF-16 code units to escape (SplitSurrogates).
type piece struct {
	bytes []byte
	units []uint16
}

// size is the piece's length in bytes (UTF-16 units for units).
func (p piece) size() int {
	if p.units != nil {
		return len(p.units)
	}
	return len(p.bytes)
}

// appendPiece appends p as a quoted JSON string.
func appendPiece(dst []byte, p piece) []byte {
	dst = append(dst, '"')
	if p.units != nil {
		for _, u := range p.units {
			if u >= 0x20 && u < 0x7f && u != '"' && u != '\\' {
				dst = append(dst, byte(u))
				continue
			}
			dst = appendUnitEscape(dst, u)
		}
		return append(dst, '"')
	}
	for _, c := range p.bytes {
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c < 0x20:
			dst = appendUnitEscape(dst, uint16(c))
		default:
			dst = append(dst, c) // raw, even half a UTF-8 sequence
		}
	}
	return append(dst, '"')
}

// appendString appends s as a quoted JSON string (HTML characters literal,
// as the APIs send them).
func appendJSONString(dst []byte, s string) []byte {
	return appendPiece(dst, piece{bytes: []byte(s)})
}

func appendUnitEscape(dst []byte, u uint16) []byte {
	const hex = "0123456789abcdef"
	return append(dst, '\\', 'u', hex[u>>12&0xf], hex[u>>8&0xf], hex[u>>4&0xf], hex[u&0xf])
}

// split cuts s into fragments of 1..maxBytes for the quirks in force: at
// character boundaries normally (fragments), anywhere in the bytes with
// SplitUTF8, anywhere in the UTF-16 code units with SplitSurrogates. With
// either quirk at least one cut falls inside a character when s has a
// character the quirk can cut, so the quirk always shows.
func split(s string, rng *rand.Rand, maxBytes int, q quirkSet) []piece {
	switch {
	case q[SplitSurrogates]:
		return splitUnits(utf16.Encode([]rune(s)), rng, maxBytes)
	case q[SplitUTF8]:
		return splitBytes([]byte(s), rng, maxBytes)
	}
	var out []piece
	for _, f := range fragments(s, rng, maxBytes) {
		out = append(out, piece{bytes: []byte(f)})
	}
	return out
}

func splitBytes(b []byte, rng *rand.Rand, maxBytes int) []piece {
	inside := func(i int) bool { return !utf8.RuneStart(b[i]) }
	var out []piece
	for _, p := range cutAt(b, rng, maxBytes, inside) {
		out = append(out, piece{bytes: p})
	}
	return out
}

func splitUnits(u []uint16, rng *rand.Rand, maxBytes int) []piece {
	inside := func(i int) bool { return u[i] >= 0xdc00 && u[i] <= 0xdfff }
	var out []piece
	for _, p := range cutAt(u, rng, maxBytes, inside) {
		out = append(out, piece{units: p})
	}
	return out
}

// cutAt cuts s at random places, at least one of them (when there is one)
// where inside holds.
func cutAt[T any](s []T, rng *rand.Rand, maxLen int, inside func(int) bool) [][]T {
	cuts := ensureCut(randomCuts(len(s), rng, maxLen), len(s), inside)
	var out [][]T
	prev := 0
	for _, c := range append(cuts, len(s)) {
		out = append(out, s[prev:c])
		prev = c
	}
	return out
}

// randomCuts returns increasing cut positions in (0, n) with gaps of
// 1..maxLen.
func randomCuts(n int, rng *rand.Rand, maxLen int) []int {
	var cuts []int
	for at := 1 + rng.IntN(maxLen); at < n; at += 1 + rng.IntN(maxLen) {
		cuts = append(cuts, at)
	}
	return cuts
}

// ensureCut adds the first position where inside holds to cuts unless a cut
// is already at such a position.
func ensureCut(cuts []int, n int, inside func(int) bool) []int {
	for _, c := range cuts {
		if inside(c) {
			return cuts
		}
	}
	for i := 1; i < n; i++ {
		if inside(i) {
			out := make([]int, 0, len(cuts)+1)
			added := false
			for _, c := range cuts {
				if !added && c > i {
					out = append(out, i)
					added = true
				}
				if c != i {
					out = append(out, c)
				}
			}
			if !added {
				out = append(out, i)
			}
			return out
		}
	}
	return cuts
}
