package permission

import (
	"path/filepath"
	"strings"
)

// fileWriters are the commands whose arguments name what they write: every
// argument that is not an option, or only the last one (a copy's target).
var fileWriters = map[string]bool{
	"mkdir": true, "touch": true, "rm": true, "rmdir": true, "mv": true, "tee": true, "truncate": true,
	"cp": false, "ln": false, "install": false,
}

// WriteTargets lists the paths a Bash line is seen to write, absolute
// and clean: the arguments of the file commands that write (mkdir, touch,
// rm, mv, cp's target, ...) and the files output is redirected to. cwd is
// where the line starts; home expands "~". It is what a prompt can tell of
// the line before it runs, not a bound: other programs write where their
// code says, and words known only at run time are left out.
func WriteTargets(line, cwd, home string) []string {
	an := analyze(line, cwd, home)
	var out []string
	add := func(cwds []string, w string) {
		if w == "" || strings.Contains(w, dynWord) || isGlob(w) {
			return
		}
		dir := cwd
		if len(cwds) > 0 {
			dir = cwds[len(cwds)-1]
		}
		if !filepath.IsAbs(w) && dir == "" {
			return
		}
		p := w
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		p = filepath.Clean(p)
		for _, o := range out {
			if o == p {
				return
			}
		}
		out = append(out, p)
	}
	for _, c := range an.commands {
		words := c.inner().words
		if len(words) == 0 {
			continue
		}
		all, ok := fileWriters[filepath.Base(words[0])]
		if !ok {
			continue
		}
		var args []string
		for _, w := range words[1:] {
			if !strings.HasPrefix(w, "-") {
				args = append(args, w)
			}
		}
		if !all && len(args) > 0 {
			args = args[len(args)-1:]
		}
		for _, a := range args {
			add(c.cwds, a)
		}
	}
	for _, r := range an.redirs {
		if r.write && r.target != "/dev/null" && !strings.HasPrefix(r.target, "/dev/") {
			add(r.cwds, r.target)
		}
	}
	return out
}
