// Package linediff diffs text by lines: the hunks of a unified diff with
// three lines of context, in the shape Claude Code reports for Write and
// Edit (its structuredPatch). Package tool/file reports them; the terminal
// UI shows them in permission prompts.
package linediff

import "strings"

// Hunk is one hunk of a structured patch, in the shape Claude Code reports
// for Write and Edit (its structuredPatch, the jsdiff format): line numbers
// are 1-based, Lines are the hunk's lines without their line breaks, each
// prefixed with ' ' (context), '-' (removed) or '+' (added).
type Hunk struct {
	OldStart int      `json:"oldStart"`
	OldLines int      `json:"oldLines"`
	NewStart int      `json:"newStart"`
	NewLines int      `json:"newLines"`
	Lines    []string `json:"lines"`
}

// patchContext is how many unchanged lines surround each change, as in a
// unified diff.
const patchContext = 3

// maxDiffLines bounds the changed region the line diff looks into (Myers'
// trace takes up to (lines)² words); a larger one is reported as one
// replacement (still a correct patch, only not a minimal one), so a rewrite
// of a huge file stays cheap.
const maxDiffLines = 1000

// Patch returns the hunks that turn old into new (none when they are
// equal).
func Patch(old, new string) []Hunk {
	if old == new {
		return []Hunk{}
	}
	a, b := splitLines(old), splitLines(new)
	ops := diffLines(a, b)
	return hunks(ops, a, b)
}

// splitLines splits text into lines without their line breaks ("\n" or
// "\r\n"); a final line break does not start another line.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// op is one line of an edit script: kept (a[i] == b[j]), removed (a[i]) or
// added (b[j]).
type op struct {
	kind byte // ' ', '-', '+'
	i, j int  // positions in a and b (for an addition, the line of a it goes before)
}

// diffLines returns an edit script from a to b: the common head and tail
// are kept, and the middle is diffed with Myers' algorithm when it is small
// enough (else replaced whole).
func diffLines(a, b []string) []op {
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	var ops []op
	for k := range head {
		ops = append(ops, op{' ', k, k})
	}
	ma, mb := a[head:len(a)-tail], b[head:len(b)-tail]
	if len(ma)+len(mb) <= maxDiffLines {
		for _, o := range myers(ma, mb) {
			ops = append(ops, op{o.kind, o.i + head, o.j + head})
		}
	} else {
		for k := range ma {
			ops = append(ops, op{'-', head + k, head})
		}
		for k := range mb {
			ops = append(ops, op{'+', head + len(ma), head + k})
		}
	}
	for k := range tail {
		ops = append(ops, op{' ', len(a) - tail + k, len(b) - tail + k})
	}
	return ops
}

// myers returns a shortest edit script from a to b (removals before
// additions where both are possible).
func myers(a, b []string) []op {
	n, m := len(a), len(b)
	off := n + m
	v := make([]int, 2*off+2)
	var trace [][]int
	for d := 0; d <= off; d++ {
		trace = append(trace, append([]int(nil), v...))
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1] // down: an addition
			} else {
				x = v[off+k-1] + 1 // right: a removal
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, a, b, d, off)
			}
		}
	}
	return nil
}

func backtrack(trace [][]int, a, b []string, d, off int) []op {
	x, y := len(a), len(b)
	var rev []op
	for ; d > 0; d-- {
		v := trace[d]
		k := x - y
		var prevK int
		if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
			prevK = k + 1
		} else {
			prevK = k - 1
		}
		prevX := v[off+prevK]
		prevY := prevX - prevK
		for x > prevX && y > prevY {
			x, y = x-1, y-1
			rev = append(rev, op{' ', x, y})
		}
		if x == prevX {
			y--
			rev = append(rev, op{'+', x, y})
		} else {
			x--
			rev = append(rev, op{'-', x, y})
		}
	}
	for x > 0 && y > 0 {
		x, y = x-1, y-1
		rev = append(rev, op{' ', x, y})
	}
	out := make([]op, len(rev))
	for i, o := range rev {
		out[len(rev)-1-i] = o
	}
	return out
}

// hunks groups an edit script into hunks with patchContext lines of
// context, merging changes whose contexts touch.
func hunks(ops []op, a, b []string) []Hunk {
	out := []Hunk{}
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		start := max(i-patchContext, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*patchContext {
				end = min(end+patchContext, len(ops))
				break
			}
			end = run
		}
		out = append(out, hunk(ops[start:end], a, b))
		i = end
	}
	return out
}

func hunk(ops []op, a, b []string) Hunk {
	// Every op carries both positions (an addition the place in a it goes
	// before, a removal the place in b), so the first op starts both sides;
	// an empty side starts there too, as jsdiff reports it.
	h := Hunk{OldStart: ops[0].i + 1, NewStart: ops[0].j + 1, Lines: make([]string, 0, len(ops))}
	for _, o := range ops {
		switch o.kind {
		case ' ':
			h.Lines = append(h.Lines, " "+a[o.i])
			h.OldLines++
			h.NewLines++
		case '-':
			h.Lines = append(h.Lines, "-"+a[o.i])
			h.OldLines++
		case '+':
			h.Lines = append(h.Lines, "+"+b[o.j])
			h.NewLines++
		}
	}
	return h
}
