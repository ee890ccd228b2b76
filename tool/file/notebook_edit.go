package file

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/tool"
)

// NotebookEditConfig configures NotebookEdit.
type NotebookEditConfig struct {
	// NewID returns the id of an inserted cell; nil draws 8 random hex
	// digits, as Jupyter does.
	NewID func() string
}

// NewNotebookEdit returns the NotebookEdit tool. It changes files, so its
// calls are neither read-only nor concurrency-safe. Safe for concurrent use.
func NewNotebookEdit(cfg NotebookEditConfig) tool.Tool {
	if cfg.NewID == nil {
		cfg.NewID = randomID
	}
	e := &notebookEditor{newID: cfg.NewID}
	return tool.New(tool.Spec[notebookEditInput]{Name: "NotebookEdit", Description: notebookEditDescription,
		Input: notebookEditSchema, Run: e.run})
}

// notebookEditor is NotebookEdit's state: where inserted cells get ids.
type notebookEditor struct{ newID func() string }

func randomID() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // never fails
	return hex.EncodeToString(b[:])
}

const notebookEditDescription = `Changes one cell of a Jupyter notebook (.ipynb): replaces its source, inserts a new cell, or deletes a cell. Everything else in the notebook is kept.

- notebook_path must be an absolute path, and the notebook must have been read with Read first (Read shows each cell's id).
- cell_id picks the cell: its id, or "cell-N" for the N-th cell counting from 0.
- edit_mode "replace" (the default) sets the cell's source to new_source; the outputs of a replaced code cell are cleared. Passing cell_type converts the cell.
- edit_mode "insert" adds a new cell after cell_id, or at the top when cell_id is omitted; cell_type is required.
- edit_mode "delete" removes the cell; new_source is ignored.`

var notebookEditSchema = tool.Object(
	tool.Required("notebook_path", tool.String("The absolute path of the notebook to change.")),
	tool.Optional("cell_id", tool.String("The id of the cell to change. For insert, the new cell goes after this one (at the top if omitted).")),
	tool.Required("new_source", tool.String("The new source of the cell.")),
	tool.Optional("cell_type", tool.Enum("The cell type; required for insert, converts the cell for replace.", "code", "markdown")),
	tool.Optional("edit_mode", tool.Enum("What to do: replace (default), insert or delete.", "replace", "insert", "delete")),
)

type notebookEditInput struct {
	NotebookPath string `json:"notebook_path"`
	CellID       string `json:"cell_id"`
	NewSource    string `json:"new_source"`
	CellType     string `json:"cell_type"`
	EditMode     string `json:"edit_mode"`
}

func (t *notebookEditor) run(_ context.Context, env *tool.Env, in notebookEditInput) (tool.Result, error) {
	path, err := filePath(env, "notebook_path", in.NotebookPath)
	if err != nil {
		return tool.Result{}, err
	}
	if strings.ToLower(filepath.Ext(path)) != ".ipynb" {
		return tool.Result{}, tool.Failf("%s is not a Jupyter notebook (.ipynb); use Edit for other files", path)
	}
	info, err := statFile(path)
	if err != nil {
		return tool.Result{}, err
	}
	if info == nil {
		return tool.Result{}, notFound(path)
	}
	if err := checkFresh(env, path, info); err != nil {
		return tool.Result{}, err
	}
	if err := checkWrite(env, path); err != nil {
		return tool.Result{}, err
	}
	data, err := readAll(env, path)
	if err != nil {
		return tool.Result{}, openFailure(path, err)
	}
	nb, err := parseNotebook(data)
	if err != nil {
		return tool.Result{}, tool.Failf("%s: %v", path, err)
	}
	msg, err := t.apply(nb, in)
	if err != nil {
		return tool.Result{}, err
	}
	out, err := nb.marshal()
	if err != nil {
		return tool.Result{}, tool.Failf("cannot encode %s: %v", path, err)
	}
	if err := writeFile(env, path, out, info); err != nil {
		return tool.Result{}, err
	}
	record(env, path, false)
	return tool.Text(msg + " in " + path + "."), nil
}

// apply performs the edit on nb and describes it.
func (t *notebookEditor) apply(nb *notebook, in notebookEditInput) (string, error) {
	mode := in.EditMode
	if mode == "" {
		mode = "replace"
	}
	idx := -1
	if in.CellID != "" {
		i, ok := nb.find(in.CellID)
		if !ok {
			return "", tool.Failf("no cell with id %q; cell ids are: %s", in.CellID, nb.ids())
		}
		idx = i
	} else if mode != "insert" {
		return "", tool.Failf("cell_id is required for edit_mode %q", mode)
	}
	switch mode {
	case "insert":
		if in.CellType == "" {
			return "", tool.Failf("cell_type (code or markdown) is required when inserting a cell")
		}
		cell := map[string]json.RawMessage{
			"cell_type": mustRaw(in.CellType),
			"metadata":  json.RawMessage("{}"),
			"source":    sourceLines(in.NewSource),
		}
		id := ""
		if nb.hasIDs() {
			id = t.newID()
			cell["id"] = mustRaw(id)
		}
		setKind(cell, in.CellType)
		nb.cells = slices.Insert(nb.cells, idx+1, cell)
		if id == "" {
			id = nb.cellID(idx + 1)
		}
		where := "at the top"
		if idx >= 0 {
			where = "after cell " + in.CellID
		}
		return "Inserted " + in.CellType + " cell " + id + " " + where, nil
	case "delete":
		nb.cells = slices.Delete(nb.cells, idx, idx+1)
		return "Deleted cell " + in.CellID, nil
	default:
		cell := nb.cells[idx]
		cell["source"] = sourceLines(in.NewSource)
		kind := in.CellType
		if kind == "" {
			_ = json.Unmarshal(cell["cell_type"], &kind)
		}
		cell["cell_type"] = mustRaw(kind)
		setKind(cell, kind)
		return "Replaced the source of cell " + in.CellID, nil
	}
}

// setKind gives a cell the fields its type requires: a code cell has fresh
// outputs and no execution count; other cells have neither.
func setKind(cell map[string]json.RawMessage, kind string) {
	if kind == "code" {
		cell["outputs"] = json.RawMessage("[]")
		cell["execution_count"] = json.RawMessage("null")
		return
	}
	delete(cell, "outputs")
	delete(cell, "execution_count")
}
