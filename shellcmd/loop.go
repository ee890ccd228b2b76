package shellcmd

import "slices"

// mark is how long the result lists were at one point of the walk.
type mark struct{ commands, redirects, assigns, cds int }

func (a *analyzer) mark() mark {
	return mark{len(a.res.Commands), len(a.res.Redirects), len(a.res.Assigns), len(a.res.Cds)}
}

// loop walks a loop's condition and body. A body that moved the working
// directory starts its next pass where the last one ended, so it is walked
// a second time, and each command, redirection and assignment in it lists
// the directories of both passes (it is listed once). When the second pass
// moves the directory again, later passes would keep moving: the directory
// is then unknown, inside the loop and after it.
func (a *analyzer) loop(walk func()) {
	start := a.mark()
	n := len(a.cwds) // cwds only grow
	walk()
	if len(a.cwds) == n {
		return
	}
	mid := a.mark()
	n = len(a.cwds)
	walk()
	a.merge(start, mid)
	if len(a.cwds) == n {
		return
	}
	a.unknownDir(nil, "a cd inside a loop moves further on every pass")
	for _, c := range a.res.Commands[start.commands:] {
		c.Dirs = union(c.Dirs, "")
	}
	for _, r := range a.res.Redirects[start.redirects:] {
		r.Dirs = union(r.Dirs, "")
	}
	for _, x := range a.res.Assigns[start.assigns:] {
		x.Dirs = union(x.Dirs, "")
	}
}

// merge folds a second pass over a loop (from mid on) into the first (from
// start to mid). The passes walk the same text, so they list the same
// things in the same order unless a size limit cut one short; then both
// are kept.
func (a *analyzer) merge(start, mid mark) {
	res := a.res
	if n := len(res.Commands) - mid.commands; n == mid.commands-start.commands {
		for i := range n {
			first, second := res.Commands[start.commands+i], res.Commands[mid.commands+i]
			first.Dirs = union(first.Dirs, second.Dirs...)
			for _, note := range second.Notes {
				if !slices.Contains(first.Notes, note) {
					first.Notes = append(first.Notes, note)
				}
			}
		}
		res.Commands = res.Commands[:mid.commands]
	}
	if n := len(res.Redirects) - mid.redirects; n == mid.redirects-start.redirects {
		for i := range n {
			first := res.Redirects[start.redirects+i]
			first.Dirs = union(first.Dirs, res.Redirects[mid.redirects+i].Dirs...)
		}
		res.Redirects = res.Redirects[:mid.redirects]
	}
	if n := len(res.Assigns) - mid.assigns; n == mid.assigns-start.assigns {
		for i := range n {
			first := res.Assigns[start.assigns+i]
			first.Dirs = union(first.Dirs, res.Assigns[mid.assigns+i].Dirs...)
		}
		res.Assigns = res.Assigns[:mid.assigns]
	}
	cds := res.Cds[:mid.cds]
	for _, d := range res.Cds[mid.cds:] {
		if !slices.Contains(cds, d) {
			cds = append(cds, d)
		}
	}
	res.Cds = cds
}

// union adds to s what it does not hold yet.
func union(s []string, more ...string) []string {
	for _, x := range more {
		if !slices.Contains(s, x) {
			s = append(s, x)
		}
	}
	return s
}
