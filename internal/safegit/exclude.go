package safegit

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/cohort-dev/cohort/internal/ownread"
)

// Exclude makes git ignore patterns in every working tree of the
// repository whose common dir is commonDir, by appending the ones missing
// to its info/exclude (never tracked, so nothing in the user's checkout
// changes) under a "# comment" line. It is how Cohort keeps its own
// machine-local paths (agent worktrees, local settings) out of the user's
// git status without editing .gitignore. An info directory or exclude
// file that is a symbolic link is refused: the file is git's, not
// something a link may redirect. Two processes racing may both append a
// pattern; a duplicate line is harmless.
func Exclude(commonDir, comment string, patterns ...string) error {
	info := filepath.Join(commonDir, "info")
	path := filepath.Join(info, "exclude")
	for _, p := range []string{info, path} {
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("safegit: %s is a symbolic link; Cohort writes only git's own exclude file (remove the link)", p)
		}
	}
	data, err := ownread.Config(path, 0)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("safegit: read %s: %w", path, err)
	}
	have := map[string]bool{}
	for line := range strings.SplitSeq(string(data), "\n") {
		have[strings.TrimSpace(line)] = true
	}
	var add strings.Builder
	for _, p := range patterns {
		if !have[p] {
			add.WriteString(p + "\n")
		}
	}
	if add.Len() == 0 {
		return nil
	}
	text := "# " + comment + "\n" + add.String()
	if len(data) > 0 && !strings.HasSuffix(string(data), "\n") {
		text = "\n" + text
	}
	// info/ only: a git dir that is gone (deleted while a session ran)
	// is not made again, which would leave a broken .git behind.
	if err := os.Mkdir(info, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("safegit: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("safegit: %w", err)
	}
	_, werr := f.WriteString(text)
	if err := errors.Join(werr, f.Close()); err != nil {
		return fmt.Errorf("safegit: append to %s: %w", path, err)
	}
	return nil
}
