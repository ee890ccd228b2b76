//go:build linux

package heldir

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// OpenNoLinks opens an absolute path as an O_PATH directory without
// following any link on the way (a link anywhere fails with ELOOP or
// EXDEV). Without openat2 (Linux before 5.6) it walks the path one name
// at a time with O_NOFOLLOW.
func OpenNoLinks(path string) (*os.File, error) {
	fd, err := unix.Openat2(unix.AT_FDCWD, path, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
	})
	if errors.Is(err, unix.ENOSYS) {
		fd, err = walkNoLinks(path)
	}
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// walkNoLinks is OpenNoLinks one component at a time.
func walkNoLinks(path string) (int, error) {
	fd, err := unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	for _, name := range splitPath(path) {
		next, err := unix.Openat(fd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

// identity is an open file's device and inode.
func identity(f *os.File) (dev, ino uint64, err error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return 0, 0, err
	}
	return st.Dev, st.Ino, nil
}
