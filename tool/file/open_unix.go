//go:build unix

package file

import (
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// openNoFollow opens name inside the open directory dir without following
// a link there (errLink when it is one), creating it with perm when
// create is set.
func openNoFollow(dir *os.File, name, path string, flags int, create bool, perm fs.FileMode) (*os.File, error) {
	oflags := flags | unix.O_NOFOLLOW | unix.O_CLOEXEC
	if create {
		oflags |= unix.O_CREAT
	}
	fd, err := unix.Openat(int(dir.Fd()), name, oflags, uint32(perm.Perm()))
	switch {
	case err == nil:
		return os.NewFile(uintptr(fd), path), nil
	case errors.Is(err, unix.ELOOP):
		return nil, errLink
	}
	return nil, &fs.PathError{Op: "open", Path: path, Err: err}
}
