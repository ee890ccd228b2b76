//go:build unix

package proc

import (
	"errors"
	"io"
	"os"
	"sync"
	"time"
)

// The process's stdio: the pipes Cohort owns (so that a grandchild holding
// one cannot hang Wait), the copies in and out, and the bounded drain of
// output after the group is gone.

// pipes wires stdin and the output writers. It returns the child's ends
// (to close after the start) and, per entry of p.outR, the writer it feeds.
func (p *Process) pipes(c Command) (childEnds []*os.File, copies []io.Writer, err error) {
	if c.StdinPipe {
		if c.Stdin != nil {
			return nil, nil, errors.New("both Stdin and StdinPipe set")
		}
		r, w, err := os.Pipe()
		if err != nil {
			return nil, nil, err
		}
		p.stdio[0], p.stdinW = r, w
		childEnds = append(childEnds, r)
	}
	switch in := c.Stdin.(type) {
	case nil:
	case *os.File:
		p.stdio[0] = in
	default:
		r, w, err := os.Pipe()
		if err != nil {
			return childEnds, nil, err
		}
		p.stdio[0], p.stdinW = r, w
		childEnds = append(childEnds, r)
	}
	out := func(dst io.Writer) (*os.File, error) {
		if dst == nil {
			return nil, nil // os/exec connects /dev/null
		}
		r, w, err := os.Pipe()
		if err != nil {
			return nil, err
		}
		childEnds = append(childEnds, w)
		p.outR = append(p.outR, r)
		copies = append(copies, dst)
		return w, nil
	}
	w, err := out(c.Stdout)
	if err != nil {
		return childEnds, nil, err
	}
	if w != nil {
		p.stdio[1] = w
	}
	if c.MergeStderr {
		if w != nil {
			p.stdio[2] = w
		}
		return childEnds, copies, nil
	}
	w, err = out(c.Stderr)
	if err != nil {
		return childEnds, nil, err
	}
	if w != nil {
		p.stdio[2] = w
	}
	return childEnds, copies, nil
}

// Stdin returns the writer to the process's stdin when Command.StdinPipe
// was set, nil otherwise. Writes may block while the child does not read;
// Close (idempotent) sends EOF. Stop closes it too.
func (p *Process) Stdin() io.WriteCloser {
	if !p.stdinPipe {
		return nil
	}
	return stdinWriter{p}
}

type stdinWriter struct{ p *Process }

func (w stdinWriter) Write(b []byte) (int, error) { return w.p.stdinW.Write(b) }
func (w stdinWriter) Close() error                { w.p.closeStdin(); return nil }

func (p *Process) closeStdin() {
	if p.stdinW != nil {
		p.stdinOnce.Do(func() { p.stdinW.Close() })
	}
}

func (p *Process) copyIn(src io.Reader) {
	defer close(p.stdinDone)
	_, _ = io.Copy(p.stdinW, src)
	p.closeStdin() // EOF for the child
}

func (p *Process) copyOut(r *os.File, dst io.Writer) {
	defer p.readers.Done()
	buf := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(buf)
	// Through the pooled buffer: io.Copy would let the file's WriteTo
	// allocate 32 KB for every process.
	if _, err := io.CopyBuffer(dst, struct{ io.Reader }{r}, *buf); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) && !errors.Is(err, os.ErrClosed) {
		// The writer failed: keep draining so the child never blocks on a
		// full pipe.
		_, _ = io.Copy(io.Discard, r)
	}
}

// copyBufs holds the buffers copyOut reads a process's output through.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// drainOutput lets the readers finish, forcing them after p.drain when a
// process outside the group still holds a pipe.
func (p *Process) drainOutput() {
	if !p.waitReaders(p.drain) {
		now := time.Now()
		for _, r := range p.outR {
			_ = r.SetReadDeadline(now)
		}
		<-p.readerDone
	}
	closeAll(p.outR)
}

func (p *Process) waitReaders(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.readerDone:
		return true
	case <-t.C:
		return false
	}
}
