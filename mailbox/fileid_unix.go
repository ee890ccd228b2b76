//go:build unix

package mailbox

import (
	"os"
	"syscall"
)

// openFlags is or-ed into the flags of every inbox and lock file open.
// O_NOFOLLOW refuses a symlink planted in place of a mailbox file, so an
// append can never be redirected to another file. O_NONBLOCK tells package
// os that the descriptor needs no switch to non-blocking mode before it
// tries (and, for a regular file, fails) to add it to the netpoller: four
// fcntl calls fewer per open on the append path. Regular files ignore it.
const openFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// statFile returns the identity (device and inode) and size of an open file.
func statFile(f *os.File) (fileID, int64, error) {
	st, err := f.Stat()
	if err != nil {
		return fileID{}, 0, err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, st.Size(), nil
	}
	return fileID{Dev: uint64(sys.Dev), Ino: uint64(sys.Ino)}, st.Size(), nil
}
