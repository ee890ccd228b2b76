//go:build !unix

package mailbox

import "os"

// openFlags adds nothing where the Unix flags do not exist.
const openFlags = 0

// statFile returns the zero fileID where the platform offers no inode, and
// the size. The cursor then trusts its offset, so a crash in the middle of
// a compaction may redeliver (never lose) messages, which dedupe mostly
// absorbs.
func statFile(f *os.File) (fileID, int64, error) {
	st, err := f.Stat()
	if err != nil {
		return fileID{}, 0, err
	}
	return fileID{}, st.Size(), nil
}
