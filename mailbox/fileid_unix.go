//go:build unix

package mailbox

import (
	"os"
	"syscall"
)

// fastOpen is or-ed into the flags of files opened on hot paths. An
// O_NONBLOCK open tells package os the descriptor needs no switch to
// non-blocking mode before it tries (and, for a regular file, fails) to add
// it to the netpoller: four fcntl calls fewer per open. Regular files ignore
// the flag.
const fastOpen = syscall.O_NONBLOCK

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
