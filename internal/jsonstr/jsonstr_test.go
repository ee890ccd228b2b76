package jsonstr

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestAsEncodingJSON holds Append and AppendHTML to the bytes encoding/json
// writes without and with HTML escaping, on the strings that need care and
// on random ones (a fixed seed, so a failure repeats), short and longer
// than the eight-byte fast path.
func TestAsEncodingJSON(t *testing.T) {
	want := func(s string, html bool) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		return strings.TrimSuffix(b.String(), "\n")
	}
	cases := []string{"", "plain", "eight ch", "sixteen chars ok", `a "quoted" \ back`, "<b>&amp;</b>",
		"plain text then <tag> & more", "tab\tnl\ncr\rbs\bff\f", "\x00\x01\x1f\x7f", "é — “curly” 日本",
		"\u2028line\u2029para", "bad \xff\xfe utf8 \xe2\x80", "\xed\xa0\x80 surrogate"}
	rng := rand.New(rand.NewPCG(40, 10))
	const pool = "\"\\\n\x01\xe2\x80\xa8\xa9<>&\x7f"
	for range 3000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = byte(' ' + rng.IntN(95))
			switch rng.IntN(6) {
			case 0: // the bytes that need escaping
				b[i] = pool[rng.IntN(len(pool))]
			case 1:
				b[i] = byte(rng.IntN(256))
			}
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		if got, w := string(Append(nil, s)), want(s, false); got != w {
			t.Fatalf("Append(%q) = %s, encoding/json writes %s", s, got, w)
		}
		if got, w := string(AppendHTML([]byte("x"), s)), "x"+want(s, true); got != w {
			t.Fatalf("AppendHTML(%q) = %s, encoding/json writes %s", s, got, w)
		}
	}
}

func BenchmarkAppend(b *testing.B) {
	s := "The absolute path to the file to modify; it must exist and be \"readable\" — or the call fails."
	buf := make([]byte, 0, 256)
	for b.Loop() {
		buf = Append(buf[:0], s)
	}
}
