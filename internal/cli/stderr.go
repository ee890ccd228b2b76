package cli

import (
	"io"
	"os"
	"sync"
)

// lockedStderr makes w safe for the writers a run has at once: the
// printer, and the session's own goroutines (a checkpoint's warning, a
// teammate's log line) write warnings to it while a turn runs. An
// *os.File is already safe (each write is one system call) and stays as
// it is, so programs given it as their standard error still get the file.
func lockedStderr(w io.Writer) io.Writer {
	if w == nil {
		return nil
	}
	if _, ok := w.(*os.File); ok {
		return w
	}
	return &lockedWriter{w: w}
}

// lockedWriter serialises Writes to w.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
