package proc

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCapture(t *testing.T) {
	tests := []struct {
		name    string
		limit   int
		writes  []string
		want    string
		dropped int64
	}{
		{"fits", 10, []string{"abc", "def"}, "abcdef", 0},
		{"exactly full", 6, []string{"abcdef"}, "abcdef", 0},
		{"one big write", 6, []string{"abcdefghij"}, "abc\n\n[… 4 bytes of output omitted …]\n\nhij", 4},
		{"many small writes", 4, strings.Split("abcdefghij", ""), "ab\n\n[… 6 bytes of output omitted …]\n\nij", 6},
		{"tail spans writes", 4, []string{"ab", "cdefgh", "i", "j"}, "ab\n\n[… 6 bytes of output omitted …]\n\nij", 6},
		{"zero limit", 0, []string{"abc"}, "\n\n[… 3 bytes of output omitted …]\n\n", 3},
		{"utf8 cut in head", 4, []string{"aé" + strings.Repeat("x", 10) + "zz"}, "a\n\n[… 12 bytes of output omitted …]\n\nzz", 12},
		{"utf8 cut in tail", 4, []string{"ab" + strings.Repeat("x", 10) + "éz"}, "ab\n\n[… 12 bytes of output omitted …]\n\nz", 12},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NewCapture(tt.limit)
			var total int64
			for _, w := range tt.writes {
				n, err := c.Write([]byte(w))
				if err != nil || n != len(w) {
					t.Fatalf("Write = %d, %v", n, err)
				}
				total += int64(n)
			}
			if diff := cmp.Diff(tt.want, c.String()); diff != "" {
				t.Errorf("String (-want +got):\n%s", diff)
			}
			if c.Total() != total || c.Dropped() != tt.dropped {
				t.Errorf("Total, Dropped = %d, %d; want %d, %d", c.Total(), c.Dropped(), total, tt.dropped)
			}
		})
	}
}

func BenchmarkCapture(b *testing.B) {
	chunk := []byte(strings.Repeat("x", 32<<10))
	c := NewCapture(30000)
	for b.Loop() {
		_, _ = c.Write(chunk)
	}
}
