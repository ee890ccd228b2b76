package search

import "bytes"

// Read deny rules and Grep. The permission check sees only the path a
// call names; the files under it are the tool's to leave out. The Go
// backend skips them as it walks. ripgrep is given --null, so that every
// path it prints ends with a NUL byte and can be told apart from the text
// whatever it holds, and --line-number, so that match lines ("N:") and
// context lines ("N-") can be told apart; filterDenied drops the files a
// rule covers and rebuilds the output ripgrep prints without those flags.

// filterDenied rewrites ripgrep's --null --line-number output for mode
// without the files denied reports, keeping line numbers only when
// lineNumbers is set. Group separators ("--") left at the start, at the
// end or twice in a row by a dropped file go too.
func filterDenied(raw []byte, mode string, lineNumbers bool, denied func(string) bool) []byte {
	var out bytes.Buffer
	lastSep, any := false, false
	for len(raw) > 0 {
		nul, nl := bytes.IndexByte(raw, 0), bytes.IndexByte(raw, '\n')
		if mode != modeFiles && (nul < 0 || (nl >= 0 && nl < nul)) {
			// A line without a path: the separator between context groups.
			if nl < 0 {
				nl = len(raw) - 1
			}
			if any && !lastSep {
				out.Write(raw[:nl+1])
				lastSep = true
			}
			raw = raw[nl+1:]
			continue
		}
		if nul < 0 {
			break // a cut-off path: nothing complete is left
		}
		path := string(raw[:nul])
		raw = raw[nul+1:]
		if mode == modeFiles {
			if !denied(path) {
				out.WriteString(path + "\n")
			}
			continue
		}
		end := bytes.IndexByte(raw, '\n')
		if end < 0 {
			break // a cut-off line
		}
		rest := raw[:end]
		raw = raw[end+1:]
		if denied(path) {
			continue
		}
		any, lastSep = true, false
		out.WriteString(path)
		if mode == modeCount {
			out.WriteByte(':')
			out.Write(rest)
			out.WriteByte('\n')
			continue
		}
		// "N:text" for a match line, "N-text" for a context line.
		i := bytes.IndexAny(rest, ":-")
		if i < 0 {
			continue
		}
		sep := rest[i]
		out.WriteByte(sep)
		if lineNumbers {
			out.Write(rest[:i+1])
		}
		out.Write(rest[i+1:])
		out.WriteByte('\n')
	}
	res := out.Bytes()
	if lastSep {
		res = bytes.TrimSuffix(res, []byte("--\n"))
	}
	return res
}

// filtered reports whether the query leaves files out: a read policy is
// in force and the root is a directory (a file given as the root was
// checked whole).
func (q *query) filtered() bool { return q.denied != nil && !q.rootIsFile }

// skip reports whether a file is left out.
func (q *query) skip(path string) bool { return q.filtered() && q.denied(path) }
