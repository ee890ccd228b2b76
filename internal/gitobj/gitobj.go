// Package gitobj answers one question without running git: does a git
// object store hold a blob with given contents? It hashes the contents as
// git does and looks the name up in the store's loose objects and in its
// packs' index files, by binary search, reading a few hundred bytes of
// each index. The sandbox asks it on its own, beside the session's search
// of history, whether a file a Read deny rule covers was ever committed
// or staged as it is now (package sandbox).
//
// Decisions:
//
//   - Both object formats are tried (SHA-1 and SHA-256): which one a
//     repository uses is in its config, a file a command may have
//     written; trying both costs one more hash.
//   - Pack index versions 1 and 2 are read; a multi-pack index always has
//     the packs' own index files beside it. An index that does not parse
//     is an error: the caller treats an unanswered question as "held".
//   - The alternates a store borrows are the caller's to list and ask.
package gitobj

import (
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
)

// BlobIDs are the names git gives a blob holding data: SHA-1, then
// SHA-256, each raw.
func BlobIDs(data []byte) [][]byte {
	var out [][]byte
	for _, h := range []hash.Hash{sha1.New(), sha256.New()} {
		h.Write([]byte("blob " + strconv.Itoa(len(data)) + "\x00"))
		h.Write(data)
		out = append(out, h.Sum(nil))
	}
	return out
}

// Has reports whether the object store objects (a git dir's objects
// directory) holds the object named id (raw, 20 or 32 bytes), loose or
// in a pack.
func Has(objects string, id []byte) (bool, error) {
	name := hex.EncodeToString(id)
	if _, err := os.Lstat(filepath.Join(objects, name[:2], name[2:])); err == nil {
		return true, nil
	}
	idxs, err := filepath.Glob(filepath.Join(objects, "pack", "*.idx"))
	if err != nil {
		return false, err
	}
	for _, idx := range idxs {
		found, err := inIndex(idx, id)
		if err != nil {
			return false, fmt.Errorf("%s: %w", idx, err)
		}
		if found {
			return true, nil
		}
	}
	return false, nil
}

var idxMagic = []byte{0xff, 't', 'O', 'c'}

// inIndex looks id up in the pack index file path.
func inIndex(path string, id []byte) (bool, error) {
	// Without blocking, and only a regular file: a command in the sandbox
	// may make a FIFO named like a pack index in a repository it writes.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return false, fmt.Errorf("not a regular file (%v)", err)
	}
	head := make([]byte, 8)
	if _, err := io.ReadFull(f, head); err != nil {
		return false, err
	}
	// Version 2: magic, version, fan-out, names; version 1: fan-out,
	// then (offset, name) entries.
	fanout, names, stride, width := int64(0), int64(0), int64(0), int64(len(id))
	switch {
	case bytes.Equal(head[:4], idxMagic) && binary.BigEndian.Uint32(head[4:]) == 2:
		fanout, names, stride = 8, 8+256*4, width
	case bytes.Equal(head[:4], idxMagic):
		return false, errors.New("pack index version not known")
	default:
		if width != 20 {
			return false, nil // version 1 holds SHA-1 names only
		}
		fanout, names, stride = 0, 256*4, 4+20
	}
	lo, hi, err := fanoutRange(f, fanout, id[0])
	if err != nil {
		return false, err
	}
	name := make([]byte, width)
	skip := int64(0)
	if stride != width {
		skip = 4
	}
	var rerr error
	i := sort.Search(int(hi-lo), func(i int) bool {
		if _, err := f.ReadAt(name, names+(lo+int64(i))*stride+skip); err != nil {
			rerr = err
			return true
		}
		return bytes.Compare(name, id) >= 0
	})
	if rerr != nil {
		return false, rerr
	}
	if int64(i) == hi-lo {
		return false, nil
	}
	if _, err := f.ReadAt(name, names+(lo+int64(i))*stride+skip); err != nil {
		return false, err
	}
	return bytes.Equal(name, id), nil
}

// fanoutRange is the range of entries whose names begin with first.
func fanoutRange(f *os.File, at int64, first byte) (lo, hi int64, err error) {
	buf := make([]byte, 4)
	if first > 0 {
		if _, err := f.ReadAt(buf, at+int64(first-1)*4); err != nil {
			return 0, 0, err
		}
		lo = int64(binary.BigEndian.Uint32(buf))
	}
	if _, err := f.ReadAt(buf, at+int64(first)*4); err != nil {
		return 0, 0, err
	}
	hi = int64(binary.BigEndian.Uint32(buf))
	if hi < lo {
		return 0, 0, errors.New("pack index fan-out is not sorted")
	}
	return lo, hi, nil
}
