package ownread

import (
	"fmt"
	"io"
	"io/fs"
	"syscall"
)

// MaxConfig is the most a file Config reads whole may hold. Settings,
// .mcp.json files and agent definitions are kilobytes; a model that can
// create one (a folder it writes) could otherwise make it a sparse file
// of gigabytes that the next session's start reads into memory.
const MaxConfig = 4 << 20

// Config reads a configuration file Cohort obeys (a settings file, an
// .mcp.json, an agent definition): with limit > 0 at most limit bytes (the
// caller tells a longer file by the count it gets), with limit <= 0 the
// whole file, which must hold at most MaxConfig bytes (a larger one is
// *Refused, read no further). Links are followed anywhere, since people
// link their settings from a dotfiles repository, but not into the
// kernel's pseudo file systems (/proc/self/environ holds Cohort's own
// API key); and the file is opened without blocking and must be a
// regular file, so a FIFO, socket or device planted under a configuration
// name (by a model's command in a folder it writes) cannot hang a
// session's start, as a plain read would: a FIFO blocks its reader until
// a writer comes, deaf to SIGTERM while it waits.
//
// An error opening the file is returned as the os package gives it
// (fs.ErrNotExist, ENOTDIR, EACCES), so callers tell them apart as
// before; a directory is a *fs.PathError with EISDIR, as os.ReadFile
// gives; anything else that is not a regular file is a *Refused naming
// it and what to do.
func Config(path string, limit int64) ([]byte, error) {
	if limit > 0 {
		return read(path, limit, nil, false, "configuration")
	}
	return read(path, MaxConfig, nil, true, "configuration")
}

// Text reads a file of instructions that Cohort puts into a prompt when
// the user names it (a custom command, a skill, a saved workflow): the
// whole file, at most limit bytes (a larger one is *Refused). Links are
// followed anywhere, as for Config, but what was opened must be a regular
// file outside the kernel's pseudo file systems that no Read deny rule
// covers (denied; nil denies nothing): a model that writes the project
// can plant .claude/commands/review.md as a link to /proc/self/environ
// or to a denied secret, and the user who types /review would send it.
// Errors are as Config's.
func Text(path string, limit int64, denied Denied) ([]byte, error) {
	return read(path, limit, denied, true, "instructions")
}

// read opens path without blocking, judges what was opened (judge:
// regular, not a pseudo file system's, not denied) and reads it: at most
// limit bytes, or, with whole, all of it when it holds no more than limit
// (else *Refused). what names the kind of file in a refusal.
func read(path string, limit int64, denied Denied, whole bool, what string) ([]byte, error) {
	f, err := open("", path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if info.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: path, Err: syscall.EISDIR}
	}
	if err := judge(f, path, denied); err != nil {
		return nil, err
	}
	tooBig := func(n int64) error {
		return &Refused{Path: path, Reason: fmt.Sprintf("it holds %d bytes, more than %s can (%d); remove it or make it smaller", n, what, limit)}
	}
	if whole && info.Size() > limit {
		return nil, tooBig(info.Size())
	}
	r := io.LimitReader(f, limit)
	if whole {
		r = io.LimitReader(f, limit+1) // a file that grew since Stat
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if whole && int64(len(data)) > limit {
		return nil, tooBig(int64(len(data)))
	}
	return data, nil
}
