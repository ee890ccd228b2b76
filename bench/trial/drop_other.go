//go:build !linux

package trial

import (
	"errors"
	"os"
)

// dropPages is Linux's alone (posix_fadvise); elsewhere a cold-start
// measurement cannot be made.
func dropPages(*os.File) error {
	return errors.New("dropping a file from the page cache needs Linux")
}
