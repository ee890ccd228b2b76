//go:build unix

package mailbox

import (
	"os"
	"syscall"
)

// identify returns the device and inode of an open file.
func identify(f *os.File) (fileID, error) {
	st, err := f.Stat()
	if err != nil {
		return fileID{}, err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, nil
	}
	return fileID{Dev: uint64(sys.Dev), Ino: uint64(sys.Ino)}, nil
}
