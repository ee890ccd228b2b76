// Package atomicfile replaces a file's contents in one step and makes the
// change durable: one implementation for every file Cohort rewrites in
// place (team files, task lists, mailbox cursors, settings, status files).
package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Write replaces the file at path with data. It writes a temporary file in
// the same directory (TempPattern: a fresh name each time, so concurrent
// writers of one file never collide), gives it perm, fsyncs it, renames it
// over path and fsyncs the directory. A reader sees the old contents or the
// new ones, never a mix, and once Write returns the new contents survive a
// crash. On error path is unchanged and the temporary file is removed.
func Write(path string, data []byte, perm fs.FileMode) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return err
	}
	if err = f.Chmod(perm); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	return SyncDir(dir)
}

// TempPattern is the glob (filepath.Glob) of the temporary files Write
// makes for path. A writer killed mid-write leaves one behind; whoever
// orders the writers of path (holds its lock) may remove them.
func TempPattern(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
}

// SyncDir fsyncs a directory so that a create, rename or remove in it is
// durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
