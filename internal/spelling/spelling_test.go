package spelling

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"über", "uber", 1}, {"allowedtool", "allowedtools", 1},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestNearest(t *testing.T) {
	known := []string{"--allowedTools", "--allowed-tools", "--disallowedTools", "--add-dir", "--agents", "--agent"}
	for _, c := range []struct {
		given string
		want  []string
	}{
		{"--allowedTool", []string{"--allowedTools", "--allowed-tools"}},
		{"--ALLOWEDTOOLS", []string{"--allowedTools", "--allowed-tools"}},
		{"--disalowedTools", []string{"--disallowedTools"}},
		{"--agnt", []string{"--agent", "--agents"}},
		{"--verbose", nil},
	} {
		if d := cmp.Diff(c.want, Nearest(c.given, known, 3)); d != "" {
			t.Errorf("Nearest(%q) (-want +got):\n%s", c.given, d)
		}
	}
}
