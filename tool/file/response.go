package file

import (
	"io/fs"

	"github.com/cohort-dev/cohort/tool"
)

// The structured results of the file tools (tool.Result.Response), in the
// shapes and with the field names Claude Code reports to hooks as
// tool_response, so that a hook script written for Claude Code reads
// tool_response.filePath or tool_response.structuredPatch unchanged.

// WriteResponse is Write's result. Type is "create" for a new file and
// "update" for an overwritten one; OriginalFile is the previous content
// (nil for a new file, or one too large to keep).
type WriteResponse struct {
	Type            string  `json:"type"`
	FilePath        string  `json:"filePath"`
	Content         string  `json:"content"`
	StructuredPatch []Hunk  `json:"structuredPatch"`
	OriginalFile    *string `json:"originalFile"`
}

// EditResponse is Edit's result. UserModified is always false: nobody
// edits the proposed change before it is applied.
type EditResponse struct {
	FilePath        string `json:"filePath"`
	OldString       string `json:"oldString"`
	NewString       string `json:"newString"`
	OriginalFile    string `json:"originalFile"`
	StructuredPatch []Hunk `json:"structuredPatch"`
	UserModified    bool   `json:"userModified"`
	ReplaceAll      bool   `json:"replaceAll"`
}

// MultiEditResponse is MultiEdit's result.
type MultiEditResponse struct {
	FilePath             string          `json:"filePath"`
	Edits                []MultiEditItem `json:"edits"`
	OriginalFileContents string          `json:"originalFileContents"`
	StructuredPatch      []Hunk          `json:"structuredPatch"`
	UserModified         bool            `json:"userModified"`
}

// ReadResponse is Read's result: Type "text" with a TextFile, or "image"
// with an ImageFile.
type ReadResponse struct {
	Type string `json:"type"`
	File any    `json:"file"`
}

// TextFile is the file of a text ReadResponse: the lines shown (without
// line numbers), where they start and how many the file has.
type TextFile struct {
	FilePath   string `json:"filePath"`
	Content    string `json:"content"`
	NumLines   int    `json:"numLines"`
	StartLine  int    `json:"startLine"`
	TotalLines int    `json:"totalLines"`
}

// ImageFile is the file of an image ReadResponse.
type ImageFile struct {
	Base64       string `json:"base64"`
	Type         string `json:"type"`
	OriginalSize int    `json:"originalSize"`
}

// keptOriginal returns a file's content before a write, for the response,
// or nil when there is none or it is too large to keep (the same bound as
// Edit's).
func keptOriginal(env *tool.Env, path string, info fs.FileInfo) *string {
	if info == nil || info.Size() > maxEditBytes {
		return nil
	}
	data, err := readAll(env, path)
	if err != nil {
		return nil
	}
	s := string(data)
	return &s
}
