package gitrepo

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Special reports whether mode is a file an open(2) can wait on forever,
// or that is no file at all: a FIFO, a device, a socket.
func Special(mode fs.FileMode) bool {
	return mode.Type()&(fs.ModeNamedPipe|fs.ModeDevice|fs.ModeCharDevice|fs.ModeSocket|fs.ModeIrregular) != 0
}

// Blocking names the first file of the layout's git dirs that git opens
// when it merely looks at the repository and that is Special: HEAD (a
// link git only reads, never opens), commondir and config. git opens
// them with a plain blocking open, so a FIFO there makes any git run on
// the repository — the nested-repository check of `git ls-files -o` in
// the folder above included — wait forever. "" when there is none. A
// repository made by a model can hold one; Cohort runs no git on it then
// (package checkpoint, internal/assemble's search of nested stores).
func (l Layout) Blocking() string {
	for _, dir := range []string{l.GitDir, l.CommonDir} {
		if dir == "" {
			continue
		}
		head := filepath.Join(dir, "HEAD")
		if fi, err := os.Lstat(head); err == nil && Special(fi.Mode()) {
			return head
		}
		for _, name := range []string{"commondir", "config"} {
			p := filepath.Join(dir, name)
			if fi, err := os.Stat(p); err == nil && Special(fi.Mode()) {
				return p
			}
		}
	}
	return ""
}
