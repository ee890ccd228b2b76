package trial

import (
	"os"

	"golang.org/x/sys/unix"
)

// dropPages asks the kernel to drop f's pages from the page cache.
func dropPages(f *os.File) error {
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}
