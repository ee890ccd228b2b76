package checkpoint

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/cohort-dev/cohort/internal/ownread"
)

// A session index read by Cohort, to spare `git ls-files` when the scan
// names only files the index already holds (the commonest checkpoint: an
// agent edited some tracked files). For those git's listing says nothing
// Cohort cannot tell itself: a file the index holds is recorded whether
// or not it is ignored, and its index entry's stat data say whether it
// changed, as git compares them (an entry not older than the index file
// is racy and counts as changed, for update-index to hash). Only the
// paths the index does not hold (new files, ignored ones) are asked of
// git, which alone knows the ignore rules. An index Cohort does not read
// in full (a split or sparse index, an entry with extended flags, another
// version, a short file) is left to git, as before.

// indexEntry is the stat data an index entry caches.
type indexEntry struct {
	ctimeS, ctimeN, mtimeS, mtimeN, ino, mode, uid, gid, size uint32
}

// readIndex reads the entries of the index file at path, whose object ids
// are hashLen bytes; ok is false when Cohort does not read it (git will).
func readIndex(path string, hashLen int) (entries map[string]indexEntry, mtime unix.Timespec, ok bool) {
	data, err := ownread.GitState(path, ownread.MaxGitIndex)
	var st unix.Stat_t
	if err != nil || unix.Stat(path, &st) != nil || len(data) < 12+hashLen || string(data[:4]) != "DIRC" {
		return nil, mtime, false
	}
	version, n := binary.BigEndian.Uint32(data[4:8]), binary.BigEndian.Uint32(data[8:12])
	if version < 2 || version > 4 {
		return nil, mtime, false
	}
	entries = make(map[string]indexEntry, n)
	be := binary.BigEndian.Uint32
	off, prev := 12, ""
	fixed := 40 + hashLen + 2
	for range n {
		if off+fixed > len(data)-hashLen {
			return nil, mtime, false
		}
		e := data[off:]
		flags := binary.BigEndian.Uint16(e[40+hashLen:])
		if flags&0x4000 != 0 {
			return nil, mtime, false // extended flags: skip-worktree, intent-to-add
		}
		ent := indexEntry{ctimeS: be(e[0:]), ctimeN: be(e[4:]), mtimeS: be(e[8:]), mtimeN: be(e[12:]),
			ino: be(e[20:]), mode: be(e[24:]), uid: be(e[28:]), gid: be(e[32:]), size: be(e[36:])}
		var name string
		if version == 4 {
			strip, k := binary.Uvarint(e[fixed:])
			if k <= 0 || int(strip) > len(prev) {
				return nil, mtime, false
			}
			end := bytes.IndexByte(e[fixed+k:], 0)
			if end < 0 {
				return nil, mtime, false
			}
			name = prev[:len(prev)-int(strip)] + string(e[fixed+k:fixed+k+end])
			off += fixed + k + end + 1
		} else {
			end := bytes.IndexByte(e[fixed:], 0)
			if end < 0 {
				return nil, mtime, false
			}
			name = string(e[fixed : fixed+end])
			off += (fixed + end + 8) &^ 7
		}
		if flags>>12&3 != 0 {
			return nil, mtime, false // a conflict's stages: git's to list
		}
		entries[name], prev = ent, name
	}
	for off+8 <= len(data)-hashLen { // extensions
		sig, size := string(data[off:off+4]), int(be(data[off+4:]))
		if sig == "link" || sig == "sdir" {
			return nil, mtime, false
		}
		off += 8 + size
	}
	if off != len(data)-hashLen {
		return nil, mtime, false
	}
	return entries, st.Mtim, true
}

// changedTracked splits the paths a scan named into those the session
// index holds whose file differs from its entry (or is gone, or racy) and
// those it does not hold (others, for git to list); ok is false when the
// index is not read (git lists every path).
func changedTracked(dir, index string, hashLen int, paths []string) (changed, others []string, ok bool) {
	entries, mtime, ok := readIndex(index, hashLen)
	if !ok {
		return nil, nil, false
	}
	for _, p := range paths {
		e, in := entries[p]
		switch {
		case !in || strings.HasSuffix(p, "/"):
			others = append(others, p)
		case !sameStat(e, filepath.Join(dir, filepath.FromSlash(p)), mtime):
			changed = append(changed, p)
		}
	}
	return changed, others, true
}

// sameStat reports whether the file at path has the stat data its index
// entry caches, and the entry is not racy (as new as the index file).
func sameStat(e indexEntry, path string, index unix.Timespec) bool {
	var st unix.Stat_t
	if unix.Lstat(path, &st) != nil {
		return false
	}
	if int64(e.mtimeS) > index.Sec&0xffffffff || int64(e.mtimeS) == index.Sec&0xffffffff && int64(e.mtimeN) >= index.Nsec {
		return false // racy
	}
	return e.mtimeS == uint32(st.Mtim.Sec) && e.mtimeN == uint32(st.Mtim.Nsec) &&
		e.ctimeS == uint32(st.Ctim.Sec) && e.ctimeN == uint32(st.Ctim.Nsec) &&
		e.ino == uint32(st.Ino) && e.size == uint32(st.Size) && e.uid == st.Uid && e.gid == st.Gid &&
		e.mode&0o170000 == uint32(st.Mode)&0o170000 && (uint32(st.Mode)&unix.S_IFMT != unix.S_IFREG || e.mode&0o111 != 0 == (st.Mode&0o100 != 0))
}
