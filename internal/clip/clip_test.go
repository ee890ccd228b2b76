package clip

import (
	"testing"
	"unicode/utf8"
)

func TestStringNeverCutsACharacter(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"hello", 10, "hello"},
		{"hello", 5, "hello"},
		{"hello", 3, "hel…"},
		{"héllo", 2, "h…"}, // é is two bytes: cutting at 2 would split it
		{"héllo", 3, "hé…"},
		{"日本語", 4, "日…"},
		{"日本語", 0, "…"},
		{"abc", -1, "…"},
		{"", 0, ""},
	}
	for _, tt := range tests {
		got := String(tt.in, tt.n)
		if got != tt.want {
			t.Errorf("String(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("String(%q, %d) = %q is not valid UTF-8", tt.in, tt.n, got)
		}
	}
}

func FuzzPrefixIsValidAndShort(f *testing.F) {
	f.Add("héllo wörld", 4)
	f.Add("日本語のテキスト", 7)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if !utf8.ValidString(s) {
			return
		}
		p := Prefix(s, n)
		if len(p) > max(n, 0) && len(p) != len(s) {
			t.Fatalf("Prefix(%q, %d) = %q is longer than %d", s, n, p, n)
		}
		if !utf8.ValidString(p) {
			t.Fatalf("Prefix(%q, %d) = %q is not valid UTF-8", s, n, p)
		}
		if len(s) <= n && p != s {
			t.Fatalf("Prefix(%q, %d) = %q, want s unchanged", s, n, p)
		}
	})
}

func TestRunesCountsCharacters(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"héllo", 5, "héllo"},
		{"héllo", 2, "hé…"},
		{"日本語", 1, "日…"},
		{"日本語", 3, "日本語"},
		{"abc", 0, "…"},
		{"", 0, ""},
	}
	for _, tt := range tests {
		if got := Runes(tt.in, tt.n); got != tt.want {
			t.Errorf("Runes(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}
