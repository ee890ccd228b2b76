package ownread

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

// Denied reports whether a Read deny rule covers an absolute path
// (permission.Checker.DeniedRead); nil denies nothing.
type Denied func(path string) bool

// Refused is the error for a file that exists but was not read.
type Refused struct {
	Path   string // the file as Cohort named it
	Reason string // why, with what to do
}

func (e *Refused) Error() string {
	return fmt.Sprintf("%s was not read: %s", e.Path, e.Reason)
}

// pseudo are the kernel's file systems, whose files describe processes
// and devices (Cohort's environment among them), never instructions.
var pseudo = []string{"/proc", "/dev", "/sys"}

// ReadFile reads the regular file dir/name, at most limit bytes (limit <=
// 0: all of it). With root set, dir must lie within root, and a link is
// followed only while it stays inside root. A missing file is
// fs.ErrNotExist; a file that exists but must not be read is *Refused.
func ReadFile(root, dir, name string, limit int64, denied Denied) ([]byte, error) {
	path := filepath.Join(dir, name)
	f, err := open(root, path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if err != nil {
		return nil, &Refused{Path: path, Reason: openFailure(root, path, err)}
	}
	defer f.Close()
	if err := judge(f, path, denied); err != nil {
		return nil, err
	}
	var r io.Reader = f
	if limit > 0 {
		r = io.LimitReader(f, limit)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return data, nil
}

// open opens path for reading without blocking, through root when set.
func open(root, path string) (*os.File, error) {
	const flags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_CLOEXEC
	if root == "" {
		return os.OpenFile(path, flags, 0)
	}
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("it is outside %s", root)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.OpenFile(rel, flags, 0)
}

// judge refuses what was opened unless it is a regular file outside the
// pseudo file systems that no Read deny rule covers.
func judge(f *os.File, path string, denied Denied) error {
	info, err := f.Stat()
	if err != nil {
		return &Refused{Path: path, Reason: err.Error()}
	}
	if !info.Mode().IsRegular() {
		return &Refused{Path: path, Reason: fmt.Sprintf("it is not a regular file (%s); remove it or replace it with a regular file", info.Mode().Type())}
	}
	real, ok := realPath(f)
	if !ok {
		return &Refused{Path: path, Reason: "where it leads cannot be told (/proc/self/fd is not readable)"}
	}
	for _, p := range pseudo {
		if real == p || strings.HasPrefix(real, p+"/") {
			return &Refused{Path: path, Reason: fmt.Sprintf("it leads to %s, a file of the kernel's, not instructions; remove the link", real)}
		}
	}
	if denied != nil && (denied(real) || denied(filepath.Clean(path))) {
		return &Refused{Path: path, Reason: fmt.Sprintf("it is %s, which a Read deny rule covers; remove the link, or the deny rule if the file is meant to be read", real)}
	}
	return nil
}

// realPath is where an open file really is, by the kernel's account.
// Elsewhere than Linux, where no such account exists, it is the name.
func realPath(f *os.File) (string, bool) {
	if runtime.GOOS != "linux" {
		return filepath.Clean(f.Name()), true
	}
	p, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
	return p, err == nil
}

// openFailure says why path could not be opened and what to do.
func openFailure(root, path string, err error) string {
	if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 && root != "" {
		to, _ := os.Readlink(path)
		return fmt.Sprintf("it is a symbolic link to %s, which leads out of %s (%v); remove the link, or replace it with a copy of the file if its content is meant to be read", to, root, unwrap(err))
	}
	return fmt.Sprintf("%v; make it a readable regular file, or remove it", unwrap(err))
}

// unwrap drops the *PathError wrapping, whose path the message names
// already.
func unwrap(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
