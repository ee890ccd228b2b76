package search

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// GrepResponse is the structured result of a Grep call
// (tool.Result.Response), in Claude Code's shape: Mode is the output mode;
// Filenames the files of the page (files_with_matches, count); Content the
// page's lines (content, count); NumMatches the matching lines in all
// (count); AppliedLimit and AppliedOffset are set when they cut the list.
type GrepResponse struct {
	Mode          string   `json:"mode"`
	NumFiles      int      `json:"numFiles"`
	Filenames     []string `json:"filenames"`
	Content       string   `json:"content,omitempty"`
	NumLines      int      `json:"numLines,omitempty"`
	NumMatches    int      `json:"numMatches,omitempty"`
	AppliedLimit  int      `json:"appliedLimit,omitempty"`
	AppliedOffset int      `json:"appliedOffset,omitempty"`
}

// present turns a backend's ripgrep-style output into the text the model
// reads: files sorted by modification time, counts summed, pages cut by
// offset and head_limit, long lines shortened, the whole capped. It also
// returns the structured result.
func (g *grepper) present(q *query, in grepInput, raw []byte, truncated bool) (string, *GrepResponse) {
	lines := splitLines(raw)
	resp := &GrepResponse{Mode: q.mode, Filenames: []string{}, AppliedOffset: in.Offset}
	if len(lines) == 0 && truncated {
		// The backend stopped inside the first line: a match exists, on a
		// line longer than the whole raw budget.
		return fmt.Sprintf("The search found a match, but the output was cut before a whole line could be shown: the matching line is longer than %d MiB. Use output_mode \"count\" or \"files_with_matches\", or read the file in parts with Read.", q.maxRaw>>20), resp
	}
	if in.HeadLimit > 0 && in.Offset+in.HeadLimit < len(lines) {
		resp.AppliedLimit = in.HeadLimit
	}
	var body []string
	var header, footer string
	switch q.mode {
	case modeFiles:
		if len(lines) == 0 {
			return "No files found", resp
		}
		sortByModTime(lines)
		var note string
		body, note = paginate(lines, in.Offset, in.HeadLimit, "files")
		header = fmt.Sprintf("Found %s", plural(len(lines), "file"))
		footer = note
		resp.Filenames, resp.NumFiles = slices.Clone(body), len(body)
	case modeCount:
		if len(lines) == 0 {
			return "No matches found", resp
		}
		total := 0
		for i, l := range lines {
			name, n := splitCount(l)
			if q.rootIsFile && name == "" {
				lines[i] = q.root + ":" + l
			}
			total += n
		}
		var note string
		body, note = paginate(lines, in.Offset, in.HeadLimit, "entries")
		footer = joinNotes(note, fmt.Sprintf("Found %s in %s.", plural(total, "matching line"), plural(len(lines), "file")))
		for _, l := range body {
			name, _ := splitCount(l)
			resp.Filenames = append(resp.Filenames, name)
		}
		resp.NumFiles, resp.NumMatches, resp.Content = len(lines), total, strings.Join(body, "\n")
	default:
		if len(lines) == 0 {
			return "No matches found", resp
		}
		var note string
		body, note = paginate(lines, in.Offset, in.HeadLimit, "lines")
		for i, l := range body {
			body[i] = cutLine(l, g.cfg.MaxLineChars)
		}
		footer = note
		resp.Content, resp.NumLines = strings.Join(body, "\n"), len(body)
	}
	if truncated {
		footer = joinNotes(footer, "[The search stopped early because its output grew too large, so results are incomplete. Narrow it with path, glob or type.]")
	}
	return g.capOutput(header, body, footer), resp
}

func splitLines(raw []byte) []string {
	raw = bytes.TrimSuffix(raw, []byte("\n"))
	if len(raw) == 0 {
		return nil
	}
	return strings.Split(string(raw), "\n")
}

// splitCount splits "path:N" at the last colon; a bare "N" has no path.
func splitCount(line string) (string, int) {
	i := strings.LastIndexByte(line, ':')
	n, err := strconv.Atoi(line[i+1:])
	if err != nil {
		return line, 0
	}
	if i < 0 {
		return "", n
	}
	return line[:i], n
}

// sortByModTime orders paths newest first, ties by path.
func sortByModTime(paths []string) {
	mtime := make(map[string]time.Time, len(paths))
	for _, p := range paths {
		if info, err := os.Stat(p); err == nil {
			mtime[p] = info.ModTime()
		}
	}
	slices.SortStableFunc(paths, func(a, b string) int {
		if c := mtime[b].Compare(mtime[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
}

// paginate applies offset and limit (0: no limit) and describes the page
// when it is not the whole list.
func paginate(items []string, offset, limit int, what string) ([]string, string) {
	n := len(items)
	if offset >= n {
		if offset == 0 {
			return items, ""
		}
		return nil, fmt.Sprintf("[offset %d is past the end: there are %d %s.]", offset, n, what)
	}
	end := n
	if limit > 0 {
		end = min(offset+limit, n)
	}
	page := items[offset:end]
	switch {
	case end < n:
		return page, fmt.Sprintf("[Showing %s %d–%d of %d; use offset=%d to see more.]", what, offset+1, end, n, end)
	case offset > 0:
		return page, fmt.Sprintf("[Showing %s %d–%d of %d.]", what, offset+1, end, n)
	}
	return page, ""
}

// cutLine shortens a line to max characters.
func cutLine(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max]) + fmt.Sprintf(" … [%d more characters]", len(r)-max)
}

// capOutput joins header, body and footer, dropping body lines from the end
// so the text stays within MaxOutput.
func (g *grepper) capOutput(header string, body []string, footer string) string {
	var b strings.Builder
	if header != "" {
		b.WriteString(header)
		b.WriteByte('\n')
	}
	// Leave room for the footer and for the note about the cut.
	limit := g.cfg.MaxOutput - len(footer) - 200
	shown := 0
	for _, l := range body {
		if b.Len()+len(l)+1 > limit && shown > 0 {
			break
		}
		b.WriteString(l)
		b.WriteByte('\n')
		shown++
	}
	if shown < len(body) {
		footer = joinNotes(fmt.Sprintf("[Output cut after %d of the %d lines on this page to stay under %d bytes; use head_limit and offset, or narrow the search.]",
			shown, len(body), g.cfg.MaxOutput), footer)
	}
	out := strings.TrimSuffix(b.String(), "\n")
	if footer != "" {
		out = joinNotes(out, footer)
	}
	return out
}

func joinNotes(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n" + b
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// unwrapPath drops the path from an *fs.PathError.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
