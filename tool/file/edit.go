package file

import (
	"context"
	"fmt"
	"io/fs"
	"strings"

	"github.com/cohort-dev/cohort/internal/lazyre"
	"github.com/cohort-dev/cohort/tool"
)

// maxEditBytes bounds the files Edit loads into memory.
const maxEditBytes = 64 << 20

// NewEdit returns the Edit tool. It changes files, so its calls are
// neither read-only nor concurrency-safe. Safe for concurrent use.
func NewEdit() tool.Tool {
	return tool.New(tool.Spec[editInput]{Name: "Edit", Description: editDescription, Input: editSchema, Run: edit})
}

const editDescription = `Replaces exact text in a file.

- file_path must be an absolute path, and you must have read the file with Read first; if it changed since, read it again.
- old_string must match the file exactly, including indentation and whitespace. Copy it from the Read output without the line-number prefix (the number and the tab before each line).
- old_string must occur exactly once, unless replace_all is true. If it occurs more than once, include more surrounding lines to make it unique, or set replace_all to change every occurrence (useful for renaming).
- new_string must differ from old_string.
- With an empty old_string, Edit creates a file that does not exist yet (or fills an empty one) with new_string.
- Line endings of the file are kept.`

var editSchema = tool.Object(
	tool.Required("file_path", tool.String("The absolute path of the file to change.")),
	tool.Required("old_string", tool.String("The exact text to replace.")),
	tool.Required("new_string", tool.String("The text to put in its place (must differ from old_string).")),
	tool.Optional("replace_all", tool.Boolean("Replace every occurrence of old_string instead of exactly one (default false).")),
)

type editInput struct {
	FilePath   string `json:"file_path"`
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all"`
}

func edit(_ context.Context, env *tool.Env, in editInput) (tool.Result, error) {
	path, err := filePath(env, "file_path", in.FilePath)
	if err != nil {
		return tool.Result{}, err
	}
	if in.OldString == in.NewString {
		return tool.Result{}, tool.Failf("old_string and new_string are identical; there is nothing to change")
	}
	info, err := statFile(path)
	if err != nil {
		return tool.Result{}, err
	}
	if info == nil {
		if in.OldString != "" {
			return tool.Result{}, notFound(path)
		}
		return create(env, path, in)
	}
	data, err := loadForEdit(env, path, info, "Edit")
	if err != nil {
		return tool.Result{}, err
	}
	updated, first, n, err := replace(path, data, in)
	if err != nil {
		return tool.Result{}, err
	}
	if err := checkWrite(env, path); err != nil {
		return tool.Result{}, err
	}
	if err := writeFile(env, path, []byte(updated), info); err != nil {
		return tool.Result{}, err
	}
	record(env, path, false)
	what := "1 occurrence"
	if n != 1 {
		what = fmt.Sprintf("all %d occurrences (the first is shown)", n)
	}
	res := tool.Text(fmt.Sprintf("Edited %s: replaced %s. The changed region now reads:\n%s",
		path, what, snippet(updated, first, first+len(toFileEOL(updated, in.NewString)))))
	res.Response = in.response(path, data, updated)
	return res, nil
}

// loadForEdit reads an existing file that a tool named by who is about to
// change: it must be fresh (read since its last change), not too large and
// text.
func loadForEdit(env *tool.Env, path string, info fs.FileInfo, who string) (string, error) {
	if err := checkFresh(env, path, info); err != nil {
		return "", err
	}
	if info.Size() > maxEditBytes {
		return "", tool.Failf("%s is %d bytes, too large to %s (limit %d); change it through Bash instead", path, info.Size(), who, maxEditBytes)
	}
	data, err := readAll(env, path)
	if err != nil {
		return "", openFailure(path, err)
	}
	if isBinary(data[:min(len(data), sniffLen)]) {
		return "", tool.Failf("%s is a binary file; %s only changes text", path, who)
	}
	return string(data), nil
}

// create makes the file an edit with an empty old_string asks for.
func create(env *tool.Env, path string, in editInput) (tool.Result, error) {
	if err := checkWrite(env, path); err != nil {
		return tool.Result{}, err
	}
	if err := writeFile(env, path, []byte(in.NewString), nil); err != nil {
		return tool.Result{}, err
	}
	record(env, path, false)
	res := tool.Text(fmt.Sprintf("Created %s (%s).", path, plural(countLines(in.NewString), "line")))
	res.Response = in.response(path, "", in.NewString)
	return res, nil
}

// response is the structured result of an edit that turned original into
// updated.
func (in editInput) response(path, original, updated string) *EditResponse {
	return &EditResponse{FilePath: path, OldString: in.OldString, NewString: in.NewString, OriginalFile: original,
		StructuredPatch: structuredPatch(original, updated), ReplaceAll: in.ReplaceAll}
}

// replace applies the edit to content and returns the result, the byte
// offset of the first replacement in it, and how many were made.
func replace(path, content string, in editInput) (string, int, int, error) {
	if in.OldString == "" {
		if content != "" {
			return "", 0, 0, tool.Failf("old_string is empty but %s is not; give the text to replace, or use Write to replace the whole file", path)
		}
		return in.NewString, 0, 1, nil
	}
	old := toFileEOL(content, in.OldString)
	repl := toFileEOL(content, in.NewString)
	n := strings.Count(content, old)
	switch {
	case n == 0:
		return "", 0, 0, tool.Failf("old_string was not found in %s. It must match the file exactly, including whitespace and indentation; Read the file again if unsure.%s",
			path, lineNumberHint(in.OldString))
	case n > 1 && !in.ReplaceAll:
		return "", 0, 0, tool.Failf("old_string occurs %d times in %s. Include more surrounding lines to make it unique, or set replace_all to true to change every occurrence.", n, path)
	}
	first := strings.Index(content, old)
	if in.ReplaceAll {
		return strings.ReplaceAll(content, old, repl), first, n, nil
	}
	return content[:first] + repl + content[first+len(old):], first, 1, nil
}

// toFileEOL converts s to CRLF line breaks when every line break of content
// is CRLF, so text the model typed with \n matches and stays consistent.
func toFileEOL(content, s string) string {
	if !allCRLF(content) {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\n", "\r\n")
}

func allCRLF(content string) bool {
	crlf := strings.Count(content, "\r\n")
	return crlf > 0 && crlf == strings.Count(content, "\n")
}

var lineNumberPrefix = lazyre.New(`(?m)^\s*\d+\t`)

// lineNumberHint spots old_string copied with Read's line-number prefixes.
func lineNumberHint(old string) string {
	if lineNumberPrefix.MatchString(old) {
		return " old_string seems to include line-number prefixes from Read output; leave them out."
	}
	return ""
}

// snippet shows the lines around content[start:end] in cat -n form, with
// four lines of context on each side.
func snippet(content string, start, end int) string {
	const context = 4
	lines := strings.SplitAfter(content, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	first := strings.Count(content[:start], "\n")
	last := first + strings.Count(content[start:max(end, start)], "\n")
	if end > start && strings.HasSuffix(content[start:end], "\n") {
		last--
	}
	from, to := max(first-context, 0), min(last+context, len(lines)-1)
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%6d\t%s\n", i+1, strings.TrimRight(lines[i], "\r\n"))
	}
	if b.Len() == 0 {
		return "(the file is now empty)"
	}
	return strings.TrimSuffix(b.String(), "\n")
}
