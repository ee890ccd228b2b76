package search

import (
	"bytes"
	"context"
	"regexp"
	"regexp/syntax"
	"runtime"
	"sort"
	"strconv"

	"golang.org/x/sync/errgroup"

	"github.com/cohort-dev/cohort/internal/ownread"
	"github.com/cohort-dev/cohort/tool"
)

// maxSearchBytes skips larger files in the Go backend rather than loading
// them whole.
const maxSearchBytes = 256 << 20

// batchSize is how many files the Go backend searches in parallel before
// formatting their results in order.
const batchSize = 256

// goBackend searches with Go's regexp (RE2 syntax) and prints what ripgrep
// prints for the same query.
type goBackend struct{}

// hits is what one file yielded.
type hits struct {
	lines   [][]byte // the file's lines, kept in content mode
	matched []bool   // per line: part of a match
	count   int      // ripgrep's --count for the file
}

func (goBackend) search(ctx context.Context, q *query) ([]byte, bool, error) {
	re, err := compilePattern(q)
	if err != nil {
		return nil, false, err
	}
	pre := prefilter(q)
	w, err := newWalker(q)
	if err != nil {
		return nil, false, tool.Failf("%v", err)
	}
	p := &printer{q: q}
	var batch []string
	flush := func() error {
		results := make([]*hits, len(batch))
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(runtime.GOMAXPROCS(0))
		for i, path := range batch {
			g.Go(func() error {
				if gctx.Err() != nil {
					return gctx.Err()
				}
				results[i] = searchFile(path, re, pre, q)
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return err
		}
		for i, h := range results {
			if p.out.Len() >= q.maxRaw {
				break
			}
			if h != nil && h.count > 0 {
				p.file(batch[i], h)
			}
		}
		batch = batch[:0]
		return nil
	}
	var flushErr error
	err = w.files(ctx, func(path string) bool {
		if q.skip(path) {
			return true
		}
		batch = append(batch, path)
		if len(batch) == batchSize {
			flushErr = flush()
		}
		return flushErr == nil && p.out.Len() < q.maxRaw
	})
	if err == nil {
		err = flushErr
	}
	if err == nil && p.out.Len() < q.maxRaw {
		err = flush()
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		return nil, false, tool.Failf("cannot search %s: %v", q.root, unwrapPath(err))
	}
	if p.out.Len() >= q.maxRaw {
		return trimPartialLine(p.out.Bytes()[:q.maxRaw]), true, nil
	}
	return p.out.Bytes(), false, nil
}

// prefilter returns a regexp that matches a whole file whenever the
// line-by-line search would match one of its lines, so most files are
// dismissed in one pass. It is nil when no such regexp exists (multiline
// mode needs none; \A and \z mean something else in a whole file).
func prefilter(q *query) *regexp.Regexp {
	if q.multiline {
		return nil
	}
	flags := "m"
	if q.ignoreCase {
		flags += "i"
	}
	src := "(?" + flags + ")" + q.pattern
	parsed, err := syntax.Parse(src, syntax.Perl)
	if err != nil || hasTextAnchor(parsed) {
		return nil
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return nil
	}
	return re
}

func hasTextAnchor(re *syntax.Regexp) bool {
	if re.Op == syntax.OpBeginText || re.Op == syntax.OpEndText {
		return true
	}
	for _, sub := range re.Sub {
		if hasTextAnchor(sub) {
			return true
		}
	}
	return false
}

// searchFile searches one file; nil means nothing to report (no match,
// unreadable, binary, too large).
func searchFile(path string, re, pre *regexp.Regexp, q *query) *hits {
	// Without blocking, regular files only, none of the kernel's: a FIFO
	// in the project is skipped (as rg skips it), not waited on, and a
	// link to /proc/self/environ is not searched.
	data, err := ownread.Whole(path, maxSearchBytes)
	if err != nil || bytes.IndexByte(data, 0) >= 0 {
		return nil
	}
	if pre != nil && !pre.Match(data) {
		return nil
	}
	lines := bytes.Split(data, []byte("\n"))
	if len(lines) > 0 && len(lines[len(lines)-1]) == 0 {
		lines = lines[:len(lines)-1]
	}
	h := &hits{matched: make([]bool, len(lines))}
	if q.multiline {
		multilineHits(data, lines, re, h)
	} else {
		for i, l := range lines {
			if re.Match(l) {
				h.matched[i] = true
				h.count++
				if q.mode == modeFiles {
					break
				}
			}
		}
	}
	if q.mode == modeContent {
		h.lines = lines
	}
	return h
}

// multilineHits marks every line a match touches. Like ripgrep, the count
// is the number of lines on which a match starts.
func multilineHits(data []byte, lines [][]byte, re *regexp.Regexp, h *hits) {
	starts := make([]int, len(lines)) // byte offset of each line
	off := 0
	for i, l := range lines {
		starts[i] = off
		off += len(l) + 1
	}
	lineOf := func(pos int) int { return sort.SearchInts(starts, pos+1) - 1 }
	lastStart := -1
	for _, m := range re.FindAllIndex(data, -1) {
		s, e := m[0], m[1]
		if s >= len(data) && len(lines) > 0 && bytes.HasSuffix(data, []byte("\n")) {
			continue // the empty position after the final line break
		}
		first := lineOf(s)
		last := first
		if e > s {
			last = lineOf(e - 1)
		}
		if first < 0 || first >= len(lines) {
			continue
		}
		for i := first; i <= min(last, len(lines)-1); i++ {
			h.matched[i] = true
		}
		if first != lastStart {
			h.count++
			lastStart = first
		}
	}
}

// printer writes ripgrep's output format: "path:12:text" for matching lines,
// "path-13-text" for context, "--" between non-adjacent groups when context
// is shown; the path is left out when the root is a single file.
type printer struct {
	q       *query
	out     bytes.Buffer
	printed bool // anything printed yet (for separators between files)
}

func (p *printer) file(path string, h *hits) {
	q := p.q
	switch q.mode {
	case modeFiles:
		p.out.WriteString(path)
		p.out.WriteByte('\n')
		return
	case modeCount:
		if !q.rootIsFile {
			p.out.WriteString(path)
			p.out.WriteByte(':')
		}
		p.out.WriteString(strconv.Itoa(h.count))
		p.out.WriteByte('\n')
		return
	}
	context := q.before > 0 || q.after > 0
	last := -1       // last line printed in this file
	afterUntil := -1 // print context lines up to here
	for i := range h.lines {
		switch {
		case h.matched[i]:
			from := max(i-q.before, last+1)
			if context && p.printed && (last < 0 || from > last+1) {
				p.out.WriteString("--\n")
			}
			for j := from; j < i; j++ {
				p.line(path, j, h.lines[j], '-')
			}
			p.line(path, i, h.lines[i], ':')
			last, afterUntil = i, i+q.after
		case i <= afterUntil:
			p.line(path, i, h.lines[i], '-')
			last = i
		}
	}
}

func (p *printer) line(path string, i int, text []byte, sep byte) {
	if !p.q.rootIsFile {
		p.out.WriteString(path)
		p.out.WriteByte(sep)
	}
	if p.q.lineNumbers {
		p.out.WriteString(strconv.Itoa(i + 1))
		p.out.WriteByte(sep)
	}
	p.out.Write(text)
	p.out.WriteByte('\n')
	p.printed = true
}
