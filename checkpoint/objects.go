package checkpoint

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/cohort-dev/cohort/internal/atomicfile"
)

// The store's objects and refs written by Cohort itself, in git's own
// formats: a checkpoint's commit and tree as loose objects, and its ref as
// a loose ref file. The store is Cohort's alone, so no git process is
// needed for them.

// writeRef makes a new ref in the store: a loose ref file, written as git
// writes one (the store is Cohort's alone, so no git process is needed).
func (s *Store) writeRef(ref, id string) error {
	path := filepath.Join(s.gitDir, filepath.FromSlash(ref))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(path, []byte(id+"\n"), 0o600)
}

// commit writes the checkpoint's commit: a tree holding each root's tree
// and index (so the store keeps them), the checkpoint as its message. The
// two objects are written by Cohort itself (two git processes fewer per
// checkpoint); git's mktree and commit-tree do it when an id is not
// SHA-1's.
func (s *Store) commit(ctx context.Context, cp *Checkpoint) (string, error) {
	msg, err := json.Marshal(cp)
	if err != nil {
		return "", err
	}
	var entries []treeEntry
	for i, r := range cp.Roots {
		entries = append(entries, treeEntry{"40000", fmt.Sprintf("r%d", i), r.Tree})
		if r.Index != "" {
			entries = append(entries, treeEntry{"100644", fmt.Sprintf("r%d.index", i), r.Index})
		}
	}
	if body, ok := treeBody(entries); ok {
		t, err := s.writeObject("tree", body)
		if err != nil {
			return "", err
		}
		at := s.now().Unix()
		c := fmt.Sprintf("tree %s\nauthor Cohort <cohort@localhost> %d +0000\ncommitter Cohort <cohort@localhost> %d +0000\n\n%s", t, at, at, msg)
		return s.writeObject("commit", []byte(c))
	}
	var tree bytes.Buffer
	for _, e := range entries {
		kind := map[bool]string{true: "tree", false: "blob"}[e.mode == "40000"]
		fmt.Fprintf(&tree, "%06s %s %s\t%s\n", e.mode, kind, e.id, e.name)
	}
	t, err := s.storeGit(ctx, nil, tree.Bytes(), "mktree", "--missing")
	if err != nil {
		return "", err
	}
	c, err := s.storeGit(ctx, nil, msg, "-c", "user.name=Cohort", "-c", "user.email=cohort@localhost", "commit-tree", strings.TrimSpace(t))
	return strings.TrimSpace(c), err
}

// treeEntry is one entry of a tree object: its mode as git writes it,
// name and hex id.
type treeEntry struct{ mode, name, id string }

// treeBody is a tree object's body in git's order (a tree's name sorts as
// if it ended in '/'); false when an id is not a SHA-1 one.
func treeBody(entries []treeEntry) ([]byte, bool) {
	key := func(e treeEntry) string {
		if e.mode == "40000" {
			return e.name + "/"
		}
		return e.name
	}
	sorted := slices.SortedFunc(slices.Values(entries), func(a, b treeEntry) int { return strings.Compare(key(a), key(b)) })
	var body bytes.Buffer
	for _, e := range sorted {
		raw, err := hex.DecodeString(e.id)
		if err != nil || len(raw) != sha1.Size {
			return nil, false
		}
		body.WriteString(e.mode + " " + e.name + "\x00")
		body.Write(raw)
	}
	return body.Bytes(), true
}

// writeObject writes a loose SHA-1 object into the store, as git does
// (zlib of the header and body, read-only, by rename), and returns its id.
func (s *Store) writeObject(kind string, body []byte) (string, error) {
	id := objectID(kind, body, 40)
	path := filepath.Join(s.objects(), id[:2], id[2:])
	if _, err := os.Stat(path); err == nil {
		return id, nil
	}
	var z bytes.Buffer
	zw := zlibWriters.Get().(*zlib.Writer)
	zw.Reset(&z)
	fmt.Fprintf(zw, "%s %d\x00", kind, len(body))
	zw.Write(body)
	err := zw.Close()
	zlibWriters.Put(zw)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "tmp_obj_")
	if err != nil {
		return "", err
	}
	_, err = f.Write(z.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(f.Name(), 0o444)
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("writing %s object %s: %w", kind, id, err)
	}
	return id, nil
}

// zlibWriters keeps the compressors of writeObject. A new zlib writer
// allocates and clears about a megabyte of tables on its first write, for
// objects of a few hundred bytes (a checkpoint's commit and trees): in the
// fan-out benchmark that was most of a checkpoint's CPU time, page faults
// on fresh memory included (BENCHMARKS.md §15). Reset keeps the tables.
var zlibWriters = sync.Pool{New: func() any { return zlib.NewWriter(nil) }}

// objectID is git's id of an object (SHA-1, or SHA-256 for a 64-digit id).
func objectID(kind string, body []byte, idLen int) string {
	header := fmt.Sprintf("%s %d\x00", kind, len(body))
	if idLen == 64 {
		h := sha256.New()
		h.Write([]byte(header))
		h.Write(body)
		return hex.EncodeToString(h.Sum(nil))
	}
	h := sha1.New()
	h.Write([]byte(header))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

func nulJoin(paths []string) []byte {
	var b bytes.Buffer
	for _, p := range paths {
		b.WriteString(p)
		b.WriteByte(0)
	}
	return b.Bytes()
}
