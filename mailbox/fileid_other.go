//go:build !unix

package mailbox

import "os"

// openFlags adds nothing where the Unix flags do not exist.
const openFlags = 0

// identify returns the zero fileID where the platform offers no inode: the
// cursor then trusts its offset, and a crash in the middle of a compaction
// may redeliver (never lose) messages, which dedupe mostly absorbs.
func identify(f *os.File) (fileID, error) {
	_, err := f.Stat()
	return fileID{}, err
}
