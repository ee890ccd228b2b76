package linediff

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestStructuredPatch(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		want     []Hunk
	}{
		{"equal", "a\nb\n", "a\nb\n", []Hunk{}},
		{"one line changed in the middle", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nfive\n6\n7\n8\n9\n",
			[]Hunk{{OldStart: 2, OldLines: 7, NewStart: 2, NewLines: 7, Lines: []string{" 2", " 3", " 4", "-5", "+five", " 6", " 7", " 8"}}}},
		{"into an empty file", "", "a\nb\n",
			[]Hunk{{OldStart: 1, OldLines: 0, NewStart: 1, NewLines: 2, Lines: []string{"+a", "+b"}}}},
		{"everything removed", "a\n", "",
			[]Hunk{{OldStart: 1, OldLines: 1, NewStart: 1, NewLines: 0, Lines: []string{"-a"}}}},
		{"appended", "a\nb\n", "a\nb\nc\n",
			[]Hunk{{OldStart: 1, OldLines: 2, NewStart: 1, NewLines: 3, Lines: []string{" a", " b", "+c"}}}},
		{"two changes far apart", "a\n1\n2\n3\n4\n5\n6\n7\nb\n", "A\n1\n2\n3\n4\n5\n6\n7\nB\n",
			[]Hunk{
				{OldStart: 1, OldLines: 4, NewStart: 1, NewLines: 4, Lines: []string{"-a", "+A", " 1", " 2", " 3"}},
				{OldStart: 6, OldLines: 4, NewStart: 6, NewLines: 4, Lines: []string{" 5", " 6", " 7", "-b", "+B"}},
			}},
		{"two changes close together make one hunk", "a\n1\n2\nb\n", "A\n1\n2\nB\n",
			[]Hunk{{OldStart: 1, OldLines: 4, NewStart: 1, NewLines: 4, Lines: []string{"-a", "+A", " 1", " 2", "-b", "+B"}}}},
		{"CRLF line breaks", "a\r\nb\r\n", "a\r\nc\r\n",
			[]Hunk{{OldStart: 1, OldLines: 2, NewStart: 1, NewLines: 2, Lines: []string{" a", "-b", "+c"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Patch(tt.old, tt.new)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestStructuredPatchApplies applies the patches of random edits and checks
// they give the new text back, with counts that agree with the lines.
func TestStructuredPatchApplies(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"a", "b", "c", "d"}
	gen := func() []string {
		out := make([]string, rng.IntN(30))
		for i := range out {
			out[i] = words[rng.IntN(len(words))]
		}
		return out
	}
	for range 2000 {
		a, b := gen(), gen()
		old, new := joinLines(a), joinLines(b)
		hs := Patch(old, new)
		if got := apply(t, a, hs); strings.Join(got, "|") != strings.Join(b, "|") {
			t.Fatalf("patch of %q → %q gives %q: %+v", a, b, got, hs)
		}
	}
}

func joinLines(ls []string) string {
	if len(ls) == 0 {
		return ""
	}
	return strings.Join(ls, "\n") + "\n"
}

func apply(t *testing.T, a []string, hs []Hunk) []string {
	t.Helper()
	var out []string
	pos := 0 // next line of a to copy
	for _, h := range hs {
		start := h.OldStart - 1
		out = append(out, a[pos:start]...)
		pos = start
		olds, news := 0, 0
		for _, l := range h.Lines {
			switch l[0] {
			case ' ':
				if a[pos] != l[1:] {
					t.Fatalf("context %q does not match line %d %q", l, pos+1, a[pos])
				}
				out = append(out, l[1:])
				pos++
				olds++
				news++
			case '-':
				if a[pos] != l[1:] {
					t.Fatalf("removal %q does not match line %d %q", l, pos+1, a[pos])
				}
				pos++
				olds++
			case '+':
				out = append(out, l[1:])
				news++
			}
		}
		if olds != h.OldLines || news != h.NewLines {
			t.Fatalf("hunk counts %d/%d, lines say %d/%d: %+v", h.OldLines, h.NewLines, olds, news, h)
		}
	}
	return append(out, a[pos:]...)
}
