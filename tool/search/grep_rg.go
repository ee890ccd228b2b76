package search

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/cohort-dev/cohort/internal/childenv"
	"github.com/cohort-dev/cohort/internal/proc"
	"github.com/cohort-dev/cohort/tool"
)

// rgBackend runs ripgrep. The arguments pin down everything that could vary
// between machines: no config file, no colour, no heading, sorted by path,
// no global gitignore, and the file type defined from our own table. With
// a launcher it runs in the sandbox (env adds the sandbox's variables).
type rgBackend struct {
	path     string
	launcher proc.Launcher
	env      []string
}

func (b rgBackend) args(q *query) []string {
	args := []string{"--no-config", "--color=never", "--no-heading", "--sort=path", "--no-messages", "--no-ignore-global"}
	if q.filtered() {
		args = append(args, "--null") // filterDenied reads the paths
	}
	switch q.mode {
	case modeFiles:
		args = append(args, "--files-with-matches")
	case modeCount:
		args = append(args, "--count")
	default:
		if q.lineNumbers || q.filtered() {
			args = append(args, "--line-number")
		} else {
			args = append(args, "--no-line-number")
		}
		if q.before > 0 {
			args = append(args, "--before-context="+strconv.Itoa(q.before))
		}
		if q.after > 0 {
			args = append(args, "--after-context="+strconv.Itoa(q.after))
		}
	}
	if q.ignoreCase {
		args = append(args, "--ignore-case")
	}
	if q.multiline {
		args = append(args, "--multiline", "--multiline-dotall")
	}
	if q.fileType != "" {
		args = append(args, "--type-clear="+q.fileType)
		for _, g := range fileTypes[q.fileType] {
			args = append(args, "--type-add="+q.fileType+":"+g)
		}
		args = append(args, "--type="+q.fileType)
	}
	for _, g := range q.globs {
		args = append(args, "--glob="+g)
	}
	return append(args, "--regexp="+q.pattern, "--", q.root)
}

func (b rgBackend) search(ctx context.Context, q *query) ([]byte, bool, error) {
	dir := q.root
	if q.rootIsFile {
		dir = filepath.Dir(q.root)
	}
	out := &boundedBuffer{limit: q.maxRaw}
	errOut := proc.NewCapture(4096)
	p, err := proc.Start(ctx, proc.Command{
		Path:     b.path,
		Args:     b.args(q),
		Dir:      dir, // --glob patterns are relative to the working directory
		Env:      append(rgEnv(), b.env...),
		Stdout:   out,
		Stderr:   errOut,
		Launcher: b.launcher,
	})
	if err != nil {
		return nil, false, err
	}
	out.setOnFull(p.Stop)
	exit, err := p.Wait()
	if err != nil {
		return nil, false, err
	}
	data, full := out.result()
	if q.filtered() {
		data = filterDenied(data, q.mode, q.lineNumbers, q.denied)
	}
	switch {
	case full:
		return trimPartialLine(data), true, nil
	case exit.Stopped != nil:
		return nil, false, exit.Stopped
	case exit.Code == 0 || exit.Code == 1:
		return data, false, nil
	case exit.Code == 2 && len(data) > 0:
		return data, false, nil // some files could not be read
	}
	msg := strings.TrimSpace(errOut.String())
	if msg == "" {
		msg = exit.String()
	}
	return nil, false, tool.Failf("ripgrep failed: %s", msg)
}

// rgEnv is our environment without a ripgrep config file or the
// credentials Cohort holds.
func rgEnv() []string {
	var env []string
	for _, kv := range childenv.Scrub(os.Environ()) {
		if !strings.HasPrefix(kv, "RIPGREP_CONFIG_PATH=") {
			env = append(env, kv)
		}
	}
	return env
}

// boundedBuffer keeps up to limit bytes and calls onFull once when more
// arrive. Safe for concurrent use.
type boundedBuffer struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	limit  int
	full   bool
	onFull func()
}

var errFull = errors.New("output limit reached")

func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	if b.full {
		b.mu.Unlock()
		return 0, errFull
	}
	room := b.limit - b.buf.Len()
	if len(p) <= room {
		b.buf.Write(p)
		b.mu.Unlock()
		return len(p), nil
	}
	b.buf.Write(p[:room])
	b.full = true
	onFull := b.onFull
	b.mu.Unlock()
	if onFull != nil {
		onFull()
	}
	return room, errFull
}

// setOnFull sets the callback, calling it at once if the buffer already
// filled up.
func (b *boundedBuffer) setOnFull(f func()) {
	b.mu.Lock()
	b.onFull = f
	full := b.full
	b.mu.Unlock()
	if full {
		f()
	}
}

func (b *boundedBuffer) result() ([]byte, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Bytes(), b.full
}

// trimPartialLine drops an incomplete last line.
func trimPartialLine(data []byte) []byte {
	if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
		return data[:i+1]
	}
	return nil
}
