package ownread

import (
	"fmt"
	"io"
	"io/fs"
	"syscall"
)

// Config reads a configuration file Cohort obeys (a settings file, an
// .mcp.json, an agent definition), at most limit bytes (limit <= 0: all
// of it). Links are followed anywhere, since people link their settings
// from a dotfiles repository; but the file is opened without blocking
// and must be a regular file, so a FIFO, socket or device planted under
// a configuration name (by a model's command in a folder it writes)
// cannot hang a session's start, as a plain read would: a FIFO blocks
// its reader until a writer comes, deaf to SIGTERM while it waits.
//
// An error opening the file is returned as the os package gives it
// (fs.ErrNotExist, ENOTDIR, EACCES), so callers tell them apart as
// before; a directory is a *fs.PathError with EISDIR, as os.ReadFile
// gives; anything else that is not a regular file is a *Refused naming
// it and what to do.
func Config(path string, limit int64) ([]byte, error) {
	f, err := open("", path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	switch {
	case info.IsDir():
		return nil, &fs.PathError{Op: "read", Path: path, Err: syscall.EISDIR}
	case !info.Mode().IsRegular():
		return nil, &Refused{Path: path, Reason: fmt.Sprintf("it is not a regular file (%s), so it is not read as configuration; remove it or replace it with a regular file", info.Mode().Type())}
	}
	var r io.Reader = f
	if limit > 0 {
		r = io.LimitReader(f, limit)
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	return data, nil
}
