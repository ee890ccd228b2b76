// Package spelling finds what a mistyped name was meant to be: the edit
// distance between two names, and the known names nearest a given one,
// for messages that say "did you mean …".
//
// Letter case does not count (--allowedtools is one slip from
// --allowedTools, none at all here), and a name is compared without the
// dashes it starts with. A known name is "near" when it is at most a
// third of the given name's length away (at least two edits), so a short
// typo finds its name and a different word finds none.
package spelling

import (
	"slices"
	"strings"
)

// Distance is the Levenshtein distance between a and b, in runes.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev, cur := make([]int, len(rb)+1), make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}

// Nearest returns at most n of the known names nearest given, nearest
// first (known's order among equals): those at the least distance and
// one edit more. It returns none when even the nearest is not near.
func Nearest(given string, known []string, n int) []string {
	norm := func(s string) string { return strings.ToLower(strings.TrimLeft(s, "-")) }
	g := norm(given)
	dist := make(map[string]int, len(known))
	best := -1
	for _, k := range known {
		d := Distance(g, norm(k))
		dist[k] = d
		if best < 0 || d < best {
			best = d
		}
	}
	if best < 0 || best > max(2, len([]rune(g))/3) {
		return nil
	}
	var out []string
	for _, k := range known {
		if dist[k] <= best+1 && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return dist[a] - dist[b] })
	return out[:min(len(out), n)]
}
