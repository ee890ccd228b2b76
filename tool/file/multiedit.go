package file

import (
	"context"
	"fmt"

	"github.com/cohort-dev/cohort/tool"
)

// NewMultiEdit returns the MultiEdit tool: several Edit replacements in one
// file, applied in order and all or none (Claude Code agent files still
// list it). It changes files, so its calls are neither read-only nor
// concurrency-safe. Safe for concurrent use.
func NewMultiEdit() tool.Tool {
	return tool.New(tool.Spec[multiEditInput]{Name: "MultiEdit", Description: multiEditDescription, Input: multiEditSchema,
		Run: multiEdit})
}

const multiEditDescription = `Makes several exact-text replacements in one file in a single call.

- Takes file_path (absolute) and edits, a list of {old_string, new_string, replace_all?} applied in order: each edit works on the text the previous ones left.
- Each edit follows the Edit tool's rules: old_string must match exactly (whitespace included) and occur once unless replace_all is true, and new_string must differ from it.
- The edits are all applied or none: if one fails, the file is left as it was and the error names the edit.
- You must have read the file with Read first. To create a file, give a first edit with an empty old_string.
- Prefer it over several Edit calls when changing one file in several places.`

var multiEditSchema = tool.Object(
	tool.Required("file_path", tool.String("The absolute path of the file to change.")),
	tool.Required("edits", tool.Array("The replacements, applied in order.", tool.Object(
		tool.Required("old_string", tool.String("The exact text to replace.")),
		tool.Required("new_string", tool.String("The text to put in its place.")),
		tool.Optional("replace_all", tool.Boolean("Replace every occurrence instead of exactly one (default false).")),
	)).WithMinItems(1)),
)

// MultiEditItem is one replacement of a MultiEdit call.
type MultiEditItem struct {
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
}

type multiEditInput struct {
	FilePath string          `json:"file_path"`
	Edits    []MultiEditItem `json:"edits"`
}

func multiEdit(_ context.Context, env *tool.Env, in multiEditInput) (tool.Result, error) {
	path, err := filePath(env, "file_path", in.FilePath)
	if err != nil {
		return tool.Result{}, err
	}
	if len(in.Edits) == 0 {
		return tool.Result{}, tool.Failf("edits is empty; give at least one {old_string, new_string}")
	}
	info, err := statFile(path)
	if err != nil {
		return tool.Result{}, err
	}
	original := ""
	switch {
	case info == nil && in.Edits[0].OldString != "":
		return tool.Result{}, notFound(path)
	case info != nil:
		if original, err = loadForEdit(env, path, info, "MultiEdit"); err != nil {
			return tool.Result{}, err
		}
	}
	updated, total := original, 0
	for i, e := range in.Edits {
		if e.OldString == e.NewString {
			return tool.Result{}, tool.Failf("edit %d: old_string and new_string are identical; there is nothing to change (no edit was applied)", i+1)
		}
		next, _, n, err := replace(path, updated, editInput{OldString: e.OldString, NewString: e.NewString, ReplaceAll: e.ReplaceAll})
		if err != nil {
			return tool.Result{}, tool.Failf("edit %d of %d: %s (no edit was applied)", i+1, len(in.Edits), err)
		}
		updated, total = next, total+n
	}
	if err := checkWrite(env, path); err != nil {
		return tool.Result{}, err
	}
	if err := writeFile(env, path, []byte(updated), info); err != nil {
		return tool.Result{}, err
	}
	record(env, path, false)
	res := tool.Text(fmt.Sprintf("Applied %s to %s (%s replaced; the file now has %s).",
		plural(len(in.Edits), "edit"), path, plural(total, "occurrence"), plural(countLines(updated), "line")))
	res.Response = &MultiEditResponse{FilePath: path, Edits: in.Edits, OriginalFileContents: original,
		StructuredPatch: structuredPatch(original, updated)}
	return res, nil
}
