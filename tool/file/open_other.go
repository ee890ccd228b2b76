//go:build !unix

package file

import (
	"io/fs"
	"os"
	"path/filepath"
)

// openNoFollow opens name inside dir; without openat it refuses a link
// by its Lstat, which a swap can race, and says so in the package doc.
func openNoFollow(dir *os.File, name, path string, flags int, create bool, perm fs.FileMode) (*os.File, error) {
	p := filepath.Join(dir.Name(), name)
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return nil, errLink
	}
	if create {
		flags |= os.O_CREATE
	}
	return os.OpenFile(p, flags, perm)
}
