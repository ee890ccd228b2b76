package task

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Linked outputs. An agent already writes its transcript to a sidechain
// file as it runs; writing the same conversation a second time, in a second
// file, to be its task's output cost a file, a descriptor and an encoding
// of every message per agent (with a thousand agents, the descriptors alone
// made every fork of a Bash command slower). So an agent task's output
// file is a hard link to its sidechain transcript, as Claude Code points an
// agent's output file at its transcript: the file is the transcript, written
// synchronously by the transcript writer, never capped (a transcript must
// stay whole to be resumed). Lines written through the Output (notes such
// as a recovered panic) stay in memory; Tail reads the file's last lines
// followed by them. A link that cannot be made (the session's tmp dir on
// another file system) falls back to a file of the task's own.

// tailWindow is how much of a linked file Tail reads from its end.
const tailWindow = 256 << 10

// Linked reports whether the output file is a transcript written elsewhere
// (Spec.Transcript); lines written to a linked Output reach only memory.
func (o *Output) Linked() bool { return o.linked }

// linkOutputIn makes name in root a hard link to transcript. ok is false
// when the file system cannot link the two (the caller then creates a file
// of its own); an existing entry at name — a planted symbolic link or an
// id in use — is an error as for createOutputIn.
func linkOutputIn(root *os.Root, dir, name, transcript string, cfg OutputConfig) (out *Output, ok bool, err error) {
	path := filepath.Join(dir, name)
	if err := os.Link(transcript, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, true, openError(path, err, func() (fs.FileInfo, error) { return root.Lstat(name) })
		}
		return nil, false, nil
	}
	// The link went in by path; check through the root that the entry is
	// the transcript, so a directory swapped for a link is not trusted.
	got, err := root.Lstat(name)
	want, werr := os.Stat(transcript)
	if err != nil || werr != nil || !os.SameFile(got, want) {
		return nil, true, fmt.Errorf("task output %s: the link to %s did not land in the tasks directory", path, transcript)
	}
	if err := root.Chmod(name, 0o600); err != nil {
		root.Remove(name)
		return nil, true, fmt.Errorf("task output %s: chmod: %w", path, err)
	}
	cfg = cfg.withDefaults()
	return &Output{path: path, cfg: cfg, linked: true, space: make(chan struct{})}, true, nil
}

// linkedTail is Tail for a linked output: the file's last lines, then the
// lines written to memory.
func (o *Output) linkedTail(n int) []string {
	lines, _ := o.fileTail(o.cfg.MaxTailLine)
	lines = append(lines, o.memTail(0)...)
	keep := min(len(lines), o.cfg.TailLines)
	if n > 0 {
		keep = min(keep, n)
	}
	return lines[len(lines)-keep:]
}

// fileTail reads the complete lines in the last tailWindow bytes of the
// file, each cut to maxLine (0: whole); earlier is set when the file holds
// more before them.
func (o *Output) fileTail(maxLine int) (lines []string, earlier bool) {
	f, err := os.OpenFile(o.path, os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, false
	}
	start := max(0, fi.Size()-tailWindow)
	buf := make([]byte, fi.Size()-start)
	n, err := f.ReadAt(buf, start)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, false
	}
	text := string(buf[:n])
	if start > 0 { // the first line is cut; drop it
		_, text, _ = strings.Cut(text, "\n")
	}
	text = strings.TrimSuffix(text, "\n")
	if text == "" {
		return nil, start > 0
	}
	lines = strings.Split(text, "\n")
	if maxLine > 0 {
		for i, l := range lines {
			lines[i] = cutLine(l, maxLine)
		}
	}
	return lines, start > 0
}

// transcriptTail is, for a linked output, the transcript's last whole
// lines (the last tailWindow bytes of it) and then the lines written to
// memory; earlier is set when the transcript holds more before them.
// ok is false for an output that is no transcript.
func (o *Output) transcriptTail() (lines []string, earlier, ok bool) {
	if !o.linked {
		return nil, false, false
	}
	lines, earlier = o.fileTail(0)
	return append(lines, o.memTail(0)...), earlier, true
}

// linkedSize is the file's current size.
func (o *Output) linkedSize() int64 {
	fi, err := os.Lstat(o.path)
	if err != nil {
		return 0
	}
	return fi.Size()
}
