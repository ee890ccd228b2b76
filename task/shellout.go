package task

import (
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/cohort-dev/cohort/internal/lazyre"
)

// ShellTail is the most of a shell task's output ShellOutput returns: its
// end, as Claude Code's get_task_output reads it.
const ShellTail = 8 << 10

// shellID is what a shell task's id looks like (Kind's prefix b).
var shellID = lazyre.New(`^b[0-9a-z]{8}$`)

// ShellOutput reads the end of a background shell task's output (at most
// ShellTail bytes, from the file, so what the command wrote reaches it a
// moment later) and the size of the whole. A task still listed must be a
// shell task; an id no longer listed is read from its file if it is
// shaped like a shell task's (a file that is gone reads as empty).
func (r *Registry) ShellOutput(id string) (tail []byte, total int64, err error) {
	name := id + ".output"
	if t, ok := r.Get(id); ok {
		if t.Kind() != KindLocalBash {
			return nil, 0, fmt.Errorf("task %s is a %s task, not a shell task; its output is not read this way", id, t.Kind())
		}
		name = t.outputName
	} else if !shellID.MatchString(id) {
		return nil, 0, fmt.Errorf("task %q: %w (a shell task's id is b and eight letters or digits)", id, ErrNotFound)
	}
	f, err := r.root.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return []byte{}, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	total = fi.Size()
	from := max(total-ShellTail, 0)
	tail = make([]byte, total-from)
	n, err := f.ReadAt(tail, from)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, err
	}
	return tail[:n], total, nil
}
