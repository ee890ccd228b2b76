package tui

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCleanRemovesWhatWouldReachTheTerminal(t *testing.T) {
	tests := []struct {
		name, in, want string
		multi          bool
	}{
		{"plain", "hello world", "hello world", false},
		{"colour", "\x1b[31mred\x1b[0m", "red", false},
		{"cursor moves", "a\x1b[2J\x1b[Hb", "ab", false},
		{"osc title BEL", "x\x1b]0;pwned\x07y", "xy", false},
		{"osc 52 clipboard ST", "x\x1b]52;c;ZXZpbA==\x1b\\y", "xy", false},
		{"dcs", "a\x1bPq#0;2;0;0;0\x1b\\b", "ab", false},
		{"c1 csi", "a\u009b31mb", "a31mb", false},
		{"newlines single", "a\nb", "a b", false},
		{"newlines multi", "a\nb\r\n", "a\nb\n", true},
		{"tab", "a\tb", "a    b", false},
		{"binary", "a\x00\x01\x7fb", "ab", false},
		{"invalid utf8", "a\xffb", "a\ufffdb", false},
		{"bidi override", "ab\u202ecd", "abcd", false},
		{"unterminated csi", "a\x1b[31", "a", false},
		{"esc at end", "a\x1b", "a", false},
		{"wide kept", "日本語 ✓", "日本語 ✓", false},
	}
	for _, tt := range tests {
		if got := Clean(tt.in, tt.multi); got != tt.want {
			t.Errorf("%s: Clean(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{"\x1b[31mred", "\x1b]0;t\x07", "a\nb", "\xff\xfe", "\u009b2J", "ok"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, multi := range []bool{false, true} {
			out := Clean(s, multi)
			if !utf8.ValidString(out) {
				t.Fatalf("Clean(%q) = %q: not valid UTF-8", s, out)
			}
			for _, r := range out {
				if r == 0x1b || r == 0x07 || r == '\r' || (r < 0x20 && r != '\n') || (r >= 0x80 && r < 0xa0) || r == 0x7f {
					t.Fatalf("Clean(%q) = %q keeps control %U", s, out, r)
				}
				if r == '\n' && !multi {
					t.Fatalf("Clean(%q) single-line keeps a newline", s)
				}
			}
			if Clean(out, multi) != out {
				t.Fatalf("Clean is not idempotent on %q", s)
			}
		}
	})
}

func BenchmarkCleanPlain(b *testing.B) {
	s := strings.Repeat("plain tool output line ", 20)
	for b.Loop() {
		Clean(s, true)
	}
}
