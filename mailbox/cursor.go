package mailbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/cohort-dev/cohort/internal/atomicfile"
)

// cursorVersion is the cursor file format version.
const cursorVersion = 1

// fileID identifies an inbox file across renames: compaction replaces the
// inbox with a new inode, so an offset is meaningful only with the identity
// of the file it was taken in.
type fileID struct {
	Dev uint64 `json:"dev"`
	Ino uint64 `json:"ino"`
}

// position is a byte offset in one inbox file and the number of lines
// before it (for line numbers in reports).
type position struct {
	File   fileID `json:"file"`
	Offset int64  `json:"offset"`
	Line   int    `json:"line"`
}

// cursorFile is the JSON content of {agent}.cursor.
type cursorFile struct {
	Version int `json:"version"`
	position
	// Prev is the position in the file a compaction was replacing when this
	// cursor was written. If the inbox still has Prev's identity the rename
	// never happened and Prev is the position to resume from.
	Prev *position `json:"prev,omitempty"`
	// Ahead lists ids acknowledged out of order, past Offset.
	Ahead []string `json:"ahead,omitempty"`
	// Recent lists the most recently acknowledged ids, oldest first.
	Recent []string `json:"recent,omitempty"`
}

// loadCursor reads a cursor file. A missing file gives ok == false. A
// corrupt one is an error that says how to recover: the reader would
// otherwise have to guess and could redeliver everything.
func loadCursor(path string) (c cursorFile, ok bool, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cursorFile{}, false, nil
	}
	if err != nil {
		return cursorFile{}, false, err
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return cursorFile{}, false, fmt.Errorf("%s: corrupt cursor (%v); delete it to re-read the inbox from the start (recently acknowledged messages may be shown again)", path, err)
	}
	if c.Version != cursorVersion {
		return cursorFile{}, false, fmt.Errorf("%s: cursor version %d, this build reads version %d; delete it to re-read the inbox from the start", path, c.Version, cursorVersion)
	}
	if c.Offset < 0 || c.Line < 0 || (c.Prev != nil && (c.Prev.Offset < 0 || c.Prev.Line < 0)) {
		return cursorFile{}, false, fmt.Errorf("%s: corrupt cursor (negative offset); delete it to re-read the inbox from the start", path)
	}
	return c, true, nil
}

// saveCursor writes c to path atomically and durably: a temporary file in
// the same directory, fsync, rename over path, fsync the directory. A crash
// leaves either the old or the new cursor, never a mix.
func saveCursor(path string, c cursorFile) error {
	c.Version = cursorVersion
	data, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, data, 0o600)
}

// removeStaleTemps deletes temporary files a crashed reader left behind for
// agent. Only the reader (which holds the reader lock) creates them.
func removeStaleTemps(dir, agent string) {
	// agent.cursor.*.tmp: the temporary cursors of earlier versions.
	for _, pattern := range []string{filepath.Base(atomicfile.TempPattern(filepath.Join(dir, agent+".cursor"))),
		agent + ".cursor.*.tmp", agent + ".jsonl.compact"} {
		matches, _ := filepath.Glob(filepath.Join(dir, pattern))
		for _, m := range matches {
			os.Remove(m)
		}
	}
}
