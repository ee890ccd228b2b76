package ownread

// Bounds of the git state files Cohort reads on its own. git writes them,
// and so can a command in the sandbox (the project's .git is writable but
// for its config and hooks, and a nested repository's .git is the
// model's): a FIFO planted as .git/index would hang a checkpoint, a link
// to /proc/self/environ would put Cohort's key where a log or a prompt
// shows it, and a sparse file of gigabytes would be read whole.
const (
	// MaxGitRef bounds the small files: HEAD, a loose ref, a .git file,
	// a git dir's commondir and gitdir, objects/info/alternates, a
	// worktree's locked file, info/exclude. Each is a line or a few.
	MaxGitRef = 1 << 20
	// MaxGitPackedRefs bounds packed-refs: about 60 bytes a ref, so a
	// million tags and branches fit.
	MaxGitPackedRefs = 64 << 20
	// MaxGitIndex bounds an index: about 100 bytes an entry, so a
	// repository of a million files fits (the Linux kernel's is under
	// 10 MB).
	MaxGitIndex = 256 << 20
)

// GitState reads a file of a repository's state that git writes (HEAD, a
// ref, packed-refs, the index, a .git file, commondir, gitdir,
// alternates): the whole file, at most limit bytes (a larger one is
// *Refused, by its size, before any of it is read). It is opened without
// blocking and must be a regular file outside /proc, /dev and /sys, as for
// Config; errors are as Config's (a missing file is fs.ErrNotExist).
func GitState(path string, limit int64) ([]byte, error) {
	return read(path, limit, nil, true, "a git state file")
}

// Whole reads a file that a model may have made (a project file Cohort
// searches or compares itself) as GitState does: the whole regular file,
// at most limit bytes, opened without blocking, never under /proc, /dev
// or /sys.
func Whole(path string, limit int64) ([]byte, error) {
	return read(path, limit, nil, true, "Cohort reads of a file of its kind")
}
