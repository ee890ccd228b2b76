package tui

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/internal/clip"
	"github.com/cohort-dev/cohort/internal/linediff"
)

// Bounds of what a permission prompt shows of a call. A larger file or
// content is summarised: its size and line count, and its first lines.
const (
	// maxPromptFile is the largest file an Edit prompt reads to show the
	// change in place (with line numbers and context).
	maxPromptFile = 4 << 20
	// maxBodyLines is how many lines of a diff or content a prompt keeps.
	maxBodyLines = 2000
	// maxBodyLine is how many characters of one line it keeps.
	maxBodyLine = 1000
	// sniffBytes are looked at to tell binary content from text.
	sniffBytes = 8000
)

// bodyLine is one line of what a prompt shows: a diff line ('-', '+',
// ' ') with its line number (0: none), or content (kind 0).
type bodyLine struct {
	kind byte
	num  int
	text string
}

// approval is what a permission prompt shows of a call besides its
// one-line summary: a title, the diff or content, and notes (a summary of
// what is not shown). It is prepared on the asking agent's goroutine,
// which reads the file an edit changes.
type approval struct {
	summary string // the call in one line
	title   string
	body    []bodyLine
	notes   []string
	// wrap: the body's lines wrap at the terminal's width instead of being
	// cut (permissionDialog.shown), for a command approved whole.
	wrap bool
}

// callInput is the input fields a prompt shows, of every tool it knows.
type callInput struct {
	FilePath     string `json:"file_path"`
	NotebookPath string `json:"notebook_path"`
	OldString    string `json:"old_string"`
	NewString    string `json:"new_string"`
	ReplaceAll   bool   `json:"replace_all"`
	Edits        []struct {
		OldString  string `json:"old_string"`
		NewString  string `json:"new_string"`
		ReplaceAll bool   `json:"replace_all"`
	} `json:"edits"`
	Content   string `json:"content"`
	NewSource string `json:"new_source"`
	CellID    string `json:"cell_id"`
	CellType  string `json:"cell_type"`
	EditMode  string `json:"edit_mode"`
	Command   string `json:"command"`
}

// prepare builds the approval of a call: its summary line, and a diff for
// Edit and MultiEdit, the content for Write and NotebookEdit, the whole
// command for Bash.
func prepare(req cohort.PermissionRequest) approval {
	var in callInput
	if json.Unmarshal(req.Input, &in) != nil {
		return approval{summary: toolSummary(req.Tool, req.Input)}
	}
	a := describe(req.Tool, in)
	short := req.Input
	if len(short) > 64<<10 { // a large input is not parsed again for its summary
		short, _ = json.Marshal(map[string]string{"command": clip.Prefix(in.Command, 4096),
			"file_path": cmp.Or(in.FilePath, in.NotebookPath)})
	}
	a.summary = toolSummary(req.Tool, short)
	return a
}

// describe is what a prompt shows of a call of tool besides its summary.
func describe(tool string, in callInput) approval {
	switch tool {
	case "Edit":
		return editApproval(in.FilePath, []edit{{in.OldString, in.NewString, in.ReplaceAll}})
	case "MultiEdit":
		var es []edit
		for _, e := range in.Edits {
			es = append(es, edit{e.OldString, e.NewString, e.ReplaceAll})
		}
		return editApproval(in.FilePath, es)
	case "Write":
		a := contentApproval(in.Content)
		a.title = "Create " + in.FilePath
		if fi, err := os.Stat(in.FilePath); err == nil && !fi.IsDir() {
			a.title = fmt.Sprintf("Overwrite %s (now %s)", in.FilePath, bytesText(int(fi.Size())))
		}
		return a
	case "NotebookEdit":
		mode := cmp.Or(in.EditMode, "replace")
		title := fmt.Sprintf("%s cell %s of %s", mode, cmp.Or(in.CellID, "(new)"), in.NotebookPath)
		if in.CellType != "" {
			title += " (" + in.CellType + ")"
		}
		if mode == "delete" {
			return approval{title: title}
		}
		a := contentApproval(in.NewSource)
		a.title = title
		return a
	case "Bash":
		return commandApproval(in.Command)
	}
	return approval{}
}

type edit struct {
	old, new string
	all      bool
}

// editApproval diffs the file as it is against the file after the edits,
// with line numbers; without the file (too large, binary, unreadable, or
// an old_string not in it) it shows each edit's strings diffed.
func editApproval(path string, edits []edit) approval {
	a := approval{title: "Edit " + path}
	for _, e := range edits {
		if summary := binarySummary(e.old + e.new); summary != "" {
			a.notes = append(a.notes, "the edit's text is "+summary)
			return a
		}
	}
	original, why := readForPrompt(path)
	if why == "" && len(edits) == 1 && edits[0].old == "" && original == "" {
		why = "the file is new"
	}
	updated := original
	for i, e := range edits {
		if why != "" {
			break
		}
		if e.old == "" || !strings.Contains(updated, e.old) {
			which := "the edit's"
			if len(edits) > 1 {
				which = fmt.Sprintf("edit %d's", i+1)
			}
			why = which + " old_string is not in the file as it is now, so the call will fail"
			break
		}
		n := 1
		if e.all {
			n = -1
		}
		updated = strings.Replace(updated, e.old, e.new, n)
	}
	if why == "" {
		a.body = hunkLines(linediff.Patch(original, updated), true)
		a.title += " · " + changeCount(a.body)
		return a
	}
	a.notes = append(a.notes, why)
	for _, e := range edits {
		if len(a.body) > 0 {
			a.body = append(a.body, bodyLine{kind: '~'})
		}
		a.body = append(a.body, hunkLines(linediff.Patch(e.old, e.new), false)...)
	}
	return a
}

// readForPrompt reads a text file an edit changes; why says why not
// ("" when it was read; a file that does not exist reads as empty).
func readForPrompt(path string) (text, why string) {
	fi, err := os.Stat(path)
	switch {
	case os.IsNotExist(err):
		return "", ""
	case err != nil:
		return "", "the file cannot be read: " + err.Error()
	case fi.Size() > maxPromptFile:
		return "", fmt.Sprintf("the file is %s, too large to show the change in place", bytesText(int(fi.Size())))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", "the file cannot be read: " + err.Error()
	}
	if s := binarySummary(string(data)); s != "" {
		return "", "the file is " + s
	}
	return string(data), ""
}

// hunkLines lays hunks out as lines, a '~' line between hunks; numbered
// gives each its line number (the old one for a removal).
func hunkLines(hs []linediff.Hunk, numbered bool) []bodyLine {
	var out []bodyLine
	for i, h := range hs {
		if i > 0 {
			out = append(out, bodyLine{kind: '~'})
		}
		o, n := h.OldStart, h.NewStart
		for _, l := range h.Lines {
			bl := bodyLine{kind: l[0], text: clipLine(l[1:])}
			switch l[0] {
			case '-':
				bl.num = o
				o++
			case '+':
				bl.num = n
				n++
			default:
				bl.num = n
				o, n = o+1, n+1
			}
			if !numbered {
				bl.num = 0
			}
			out = append(out, bl)
			if len(out) == maxBodyLines {
				return append(out, bodyLine{kind: '~', text: "… the rest of the diff is not shown"})
			}
		}
	}
	return out
}

// changeCount says how many lines a diff adds and removes.
func changeCount(body []bodyLine) string {
	add, del := 0, 0
	for _, l := range body {
		switch l.kind {
		case '+':
			add++
		case '-':
			del++
		}
	}
	return fmt.Sprintf("+%d −%d", add, del)
}

// contentApproval shows content line by line, numbered; binary content is
// only described, and a long one is cut after maxBodyLines with a note.
func contentApproval(content string) approval {
	if s := binarySummary(content); s != "" {
		return approval{notes: []string{"the content is " + s + "; not shown"}}
	}
	var a approval
	total := strings.Count(content, "\n") + 1
	if strings.HasSuffix(content, "\n") {
		total--
	}
	rest, long := content, false
	for n := 1; rest != "" && n <= maxBodyLines; n++ {
		line, after, _ := strings.Cut(rest, "\n")
		long = long || len(line) > maxBodyLine
		a.body = append(a.body, bodyLine{num: n, text: clipLine(line)})
		rest = after
	}
	if total > len(a.body) || long {
		note := fmt.Sprintf("%s in %d lines", bytesText(len(content)), total)
		if total > len(a.body) {
			note += fmt.Sprintf(": the first %d are shown", len(a.body))
		}
		if long {
			note += fmt.Sprintf("; lines longer than %d characters are cut", maxBodyLine)
		}
		a.notes = append(a.notes, note)
	}
	return a
}

// commandApproval shows a command line by line, never cut: its lines wrap
// when drawn, since what is approved includes the end of a long chained
// line (`…; rm -rf "$d"`), which a line cut at the terminal's edge hides.
func commandApproval(cmd string) approval {
	a := approval{wrap: true}
	lines := strings.Split(strings.TrimRight(cmd, "\n"), "\n")
	for n, line := range lines {
		if n == maxBodyLines {
			a.notes = append(a.notes, fmt.Sprintf("%d lines: the first %d are shown", len(lines), maxBodyLines))
			break
		}
		a.body = append(a.body, bodyLine{num: n + 1, text: Clean(strings.TrimSuffix(line, "\r"), false)})
	}
	if len(a.body) == 1 {
		a.body[0].num = 0 // a lone "1" beside it reads like the answer "1 Yes"
	}
	return a
}

// binarySummary describes content that is not text ("" for text): NUL
// bytes or invalid UTF-8 in its first bytes.
func binarySummary(s string) string {
	head := s[:min(len(s), sniffBytes)]
	if bytes.IndexByte([]byte(head), 0) < 0 && validPrefix(head, len(s) > sniffBytes) {
		return ""
	}
	return "binary (" + bytesText(len(s)) + ")"
}

// validPrefix reports whether s is valid UTF-8, allowing a character cut
// at its end when cut is set.
func validPrefix(s string, cut bool) bool {
	if utf8.ValidString(s) {
		return true
	}
	if !cut {
		return false
	}
	for i := 1; i < utf8.UTFMax && i <= len(s); i++ {
		if utf8.ValidString(s[:len(s)-i]) {
			return true
		}
	}
	return false
}

// clipLine keeps a line's first maxBodyLine characters, cleaned.
func clipLine(s string) string {
	s = strings.TrimSuffix(s, "\r")
	if len(s) > maxBodyLine {
		s = clip.Runes(s, maxBodyLine)
	}
	return Clean(s, false)
}
