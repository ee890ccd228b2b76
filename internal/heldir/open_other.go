//go:build !linux

package heldir

import (
	"errors"
	"os"
	"syscall"
)

// OpenNoLinks opens path with links followed: only Linux has a launcher
// that confines by the hold, and the descriptor still keeps the inode.
func OpenNoLinks(path string) (*os.File, error) {
	return os.Open(path)
}

// identity is an open file's device and inode.
func identity(f *os.File) (dev, ino uint64, err error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, errors.New("no inode")
	}
	return uint64(st.Dev), uint64(st.Ino), nil
}
