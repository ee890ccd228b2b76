package file

import (
	"context"
	"fmt"

	"github.com/cohort-dev/cohort/tool"
)

// NewWrite returns the Write tool. It changes files, so its calls are
// neither read-only nor concurrency-safe. Safe for concurrent use.
func NewWrite() tool.Tool {
	return tool.New(tool.Spec[writeInput]{Name: "Write", Description: writeDescription, Input: writeSchema, Run: write})
}

const writeDescription = `Writes a file to the local filesystem, creating it (and any missing parent directories) or replacing its whole content.

- file_path must be an absolute path.
- To overwrite an existing file you must have read it with Read first, and it must not have changed since; otherwise the call fails.
- Prefer Edit for changing part of an existing file: it sends only the change. Use Write for new files or complete rewrites.
- Do not create documentation or README files unless asked to.`

var writeSchema = tool.Object(
	tool.Required("file_path", tool.String("The absolute path of the file to write.")),
	tool.Required("content", tool.String("The complete content to write.")),
)

type writeInput struct {
	FilePath string `json:"file_path"`
	Content  string `json:"content"`
}

func write(_ context.Context, env *tool.Env, in writeInput) (tool.Result, error) {
	path, err := filePath(env, "file_path", in.FilePath)
	if err != nil {
		return tool.Result{}, err
	}
	info, err := statFile(path)
	if err != nil {
		return tool.Result{}, err
	}
	if info != nil {
		if err := checkFresh(env, path, info); err != nil {
			return tool.Result{}, err
		}
	}
	if err := checkWrite(env, path); err != nil {
		return tool.Result{}, err
	}
	resp := &WriteResponse{Type: "create", FilePath: path, Content: in.Content, StructuredPatch: []Hunk{},
		OriginalFile: keptOriginal(env, path, info)}
	if err := writeFile(env, path, []byte(in.Content), info); err != nil {
		return tool.Result{}, err
	}
	record(env, path, false)
	verb := "Created"
	if info != nil {
		verb, resp.Type = "Overwrote", "update"
		if resp.OriginalFile != nil {
			resp.StructuredPatch = structuredPatch(*resp.OriginalFile, in.Content)
		}
	}
	res := tool.Text(fmt.Sprintf("%s %s (%s, %s).", verb, path, plural(countLines(in.Content), "line"), plural(len(in.Content), "byte")))
	res.Response = resp
	return res, nil
}
