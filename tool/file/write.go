package file

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
)

// Write is the Write tool. Safe for concurrent use.
type Write struct{}

// NewWrite returns the Write tool.
func NewWrite() *Write { return &Write{} }

const writeDescription = `Writes a file to the local filesystem, creating it (and any missing parent directories) or replacing its whole content.

- file_path must be an absolute path.
- To overwrite an existing file you must have read it with Read first, and it must not have changed since; otherwise the call fails.
- Prefer Edit for changing part of an existing file: it sends only the change. Use Write for new files or complete rewrites.
- Do not create documentation or README files unless asked to.`

var writeSchema = tool.Object(
	tool.Required("file_path", tool.String("The absolute path of the file to write.")),
	tool.Required("content", tool.String("The complete content to write.")),
).JSON()

// Def implements tool.Tool.
func (w *Write) Def() llm.ToolDef {
	return llm.ToolDef{Name: "Write", Description: writeDescription, InputSchema: writeSchema}
}

// Traits implements tool.Tool: writing changes files.
func (w *Write) Traits(json.RawMessage) tool.Traits { return tool.Traits{} }

// Run implements tool.Tool.
func (w *Write) Run(_ context.Context, env *tool.Env, input json.RawMessage) (tool.Result, error) {
	return toResult(w.run(env, input))
}

func (w *Write) run(env *tool.Env, input json.RawMessage) (tool.Result, error) {
	var in struct {
		FilePath string `json:"file_path"`
		Content  string `json:"content"`
	}
	if err := decode(input, &in); err != nil {
		return tool.Result{}, err
	}
	path, err := absPath(env, "file_path", in.FilePath)
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
		OriginalFile: keptOriginal(path, info)}
	if err := writeFile(path, []byte(in.Content), info); err != nil {
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
