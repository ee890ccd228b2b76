package trace

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// openFile creates or truncates path as a regular file with mode 0600,
// refusing a symbolic link at path (without following it) and anything
// that is not a regular file.
func openFile(path string) (*os.File, error) {
	if oFlags == 0 {
		if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, symlinkError(path)
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|oFlags, 0o600)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) && isLinkError(pe.Err) {
			return nil, symlinkError(path)
		}
		return nil, fmt.Errorf("trace: create %s: %w", path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("trace: stat %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("trace: %s is not a regular file (%s); give the path of a file to create", path, fi.Mode().Type())
	}
	// A file that existed keeps its mode through O_CREATE; a trace holds
	// commands and paths, so it is private either way.
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return nil, fmt.Errorf("trace: chmod %s: %w", path, err)
	}
	return f, nil
}

func symlinkError(path string) error {
	return fmt.Errorf("%w: refusing to follow %s; give the path of the file itself", ErrSymlink, path)
}
