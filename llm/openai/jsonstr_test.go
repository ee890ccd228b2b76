package openai

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// pieces cuts s into the bodies of JSON strings at every cut given: as
// raw bytes (escaping only what JSON must escape), or, with units, as
// \uXXXX escapes of UTF-16 code units, as a server that slices UTF-16
// sends them.
func pieces(s string, cuts []int, units bool) [][]byte {
	var out [][]byte
	if units {
		u := utf16.Encode([]rune(s))
		prev := 0
		for _, c := range append(cuts, len(u)) {
			c = min(max(c, prev), len(u))
			var b []byte
			for _, x := range u[prev:c] {
				const hex = "0123456789abcdef"
				b = append(b, '\\', 'u', hex[x>>12&0xf], hex[x>>8&0xf], hex[x>>4&0xf], hex[x&0xf])
			}
			out = append(out, b)
			prev = c
		}
		return out
	}
	prev := 0
	for _, c := range append(cuts, len(s)) {
		c = min(max(c, prev), len(s))
		raw, _ := json.Marshal(s[prev:c])
		body := raw[1 : len(raw)-1]
		if !utf8.ValidString(s[prev:c]) {
			body = escapeRaw(s[prev:c])
		}
		out = append(out, body)
		prev = c
	}
	return out
}

// escapeRaw escapes quotes, backslashes and controls, leaving other bytes,
// half characters included, as they are.
func escapeRaw(s string) []byte {
	var b []byte
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, []byte(`\u00`)...)
			b = append(b, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
		default:
			b = append(b, c)
		}
	}
	return b
}

func decodeAll(ps [][]byte) string {
	var f fragText
	var out strings.Builder
	for _, p := range ps {
		out.WriteString(f.add(p))
	}
	out.WriteString(f.flush())
	return out.String()
}

// TestFragTextEveryCut cuts strings at every byte and every code unit: the
// pieces always add up to the string.
func TestFragTextEveryCut(t *testing.T) {
	for _, s := range []string{"plain", "é 世界 🙂😀 \"q\" \\ \n\t", "🙂", "a😀b", strings.Repeat("ü", 5)} {
		for cut := 0; cut <= len(s); cut++ {
			if got := decodeAll(pieces(s, []int{cut}, false)); got != s {
				t.Errorf("%q cut at byte %d decodes to %q", s, cut, got)
			}
		}
		n := len(utf16.Encode([]rune(s)))
		for cut := 0; cut <= n; cut++ {
			if got := decodeAll(pieces(s, []int{cut}, true)); got != s {
				t.Errorf("%q cut at unit %d decodes to %q", s, cut, got)
			}
		}
	}
}

// TestFragTextInvalid: what is invalid for good stays U+FFFD, as
// encoding/json decodes it, once the string ends.
func TestFragTextInvalid(t *testing.T) {
	for _, tt := range []struct{ body, want string }{
		{`\ud83d`, "\ufffd"},
		{`\ud83dx`, "\ufffdx"},
		{`\ude00`, "\ufffd"},
		{"\xf0\x9f", "\ufffd\ufffd"},
		{`\u12`, "\ufffd12"},
		{`\`, "\ufffd"},
	} {
		if got := decodeAll([][]byte{[]byte(tt.body)}); got != tt.want {
			t.Errorf("%q decodes to %q, want %q", tt.body, got, tt.want)
		}
	}
}

// FuzzFragText: any string, cut anywhere, adds up; and the decoding of a
// whole valid body is encoding/json's.
func FuzzFragText(f *testing.F) {
	f.Add("é 世界 🙂", 3, 5, false)
	f.Add("a😀b", 2, 2, true)
	f.Fuzz(func(t *testing.T, s string, c1, c2 int, units bool) {
		if !utf8.ValidString(s) {
			return
		}
		c1, c2 = abs(c1)%(len(s)+1), abs(c2)%(len(s)+1)
		if got := decodeAll(pieces(s, []int{min(c1, c2), max(c1, c2)}, units)); got != s {
			t.Fatalf("%q cut at %d, %d (units %v) decodes to %q", s, c1, c2, units, got)
		}
		raw, _ := json.Marshal(s)
		var want string
		json.Unmarshal(raw, &want)
		if got, _ := decodeBody(raw[1:len(raw)-1], true); got != want {
			t.Fatalf("decodeBody(%s) = %q, encoding/json says %q", raw, got, want)
		}
	})
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
