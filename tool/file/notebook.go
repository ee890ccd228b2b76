package file

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/cohort-dev/cohort/tool"
)

// notebook is a Jupyter notebook with every field we do not touch kept as
// raw JSON.
type notebook struct {
	top   map[string]json.RawMessage
	cells []map[string]json.RawMessage
}

func parseNotebook(data []byte) (*notebook, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("not valid notebook JSON: %s", jsonErrorPos(data, err))
	}
	raw, ok := top["cells"]
	if !ok {
		return nil, fmt.Errorf("not a Jupyter notebook: no \"cells\" field")
	}
	var cells []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &cells); err != nil {
		return nil, fmt.Errorf("not a Jupyter notebook: \"cells\" is not a list of objects: %v", err)
	}
	return &notebook{top: top, cells: cells}, nil
}

// jsonErrorPos describes a JSON syntax error with its line and column.
func jsonErrorPos(data []byte, err error) string {
	var se *json.SyntaxError
	if e, ok := err.(*json.SyntaxError); ok {
		se = e
	}
	if se == nil || se.Offset <= 0 || int(se.Offset) > len(data) {
		return err.Error()
	}
	before := data[:se.Offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(se.Offset) - bytes.LastIndexByte(before, '\n') - 1
	return fmt.Sprintf("line %d, column %d: %v", line, col, err)
}

// marshal renders the notebook as Jupyter does (sorted keys, indent 1).
func (nb *notebook) marshal() ([]byte, error) {
	cells, err := marshalPlain(nb.cells)
	if err != nil {
		return nil, err
	}
	nb.top["cells"] = cells
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(nb.top); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// hasIDs reports whether cells of this notebook carry ids (nbformat ≥ 4.5).
func (nb *notebook) hasIDs() bool {
	var major, minor int
	_ = json.Unmarshal(nb.top["nbformat"], &major)
	_ = json.Unmarshal(nb.top["nbformat_minor"], &minor)
	if major > 4 || (major == 4 && minor >= 5) {
		return true
	}
	for _, c := range nb.cells {
		if _, ok := c["id"]; ok {
			return true
		}
	}
	return false
}

// cellID returns the id a cell is addressed by: its own, or "cell-N".
func (nb *notebook) cellID(i int) string {
	var id string
	if err := json.Unmarshal(nb.cells[i]["id"], &id); err == nil && id != "" {
		return id
	}
	return "cell-" + strconv.Itoa(i)
}

// find returns the index of the cell addressed by id: its id field, or
// "cell-N" / "N" for the N-th cell (from 0).
func (nb *notebook) find(id string) (int, bool) {
	for i := range nb.cells {
		var own string
		if err := json.Unmarshal(nb.cells[i]["id"], &own); err == nil && own == id {
			return i, true
		}
	}
	n, err := strconv.Atoi(strings.TrimPrefix(id, "cell-"))
	if err == nil && n >= 0 && n < len(nb.cells) {
		return n, true
	}
	return 0, false
}

// ids lists the first few cell ids, for error messages.
func (nb *notebook) ids() string {
	var list []string
	for i := range min(len(nb.cells), 10) {
		list = append(list, strconv.Quote(nb.cellID(i)))
	}
	s := strings.Join(list, ", ")
	if len(nb.cells) > 10 {
		s += fmt.Sprintf(", … (%d cells)", len(nb.cells))
	}
	if s == "" {
		s = "none; the notebook has no cells"
	}
	return s
}

// text joins a notebook string field, which may be a string or a list of
// strings.
func text(raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	var parts []string
	_ = json.Unmarshal(raw, &parts)
	return strings.Join(parts, "")
}

// sourceLines splits s as Jupyter stores sources: lines keeping their "\n".
func sourceLines(s string) json.RawMessage {
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if lines == nil {
		lines = []string{}
	}
	return mustRaw(lines)
}

// marshalPlain is json.Marshal without HTML escaping, as Jupyter writes.
func marshalPlain(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func mustRaw(v any) json.RawMessage {
	b, err := marshalPlain(v)
	if err != nil {
		panic(err) // only called with strings and slices of strings
	}
	return b
}

// render shows the notebook cell by cell for Read.
func (nb *notebook) render(path string, maxBytes int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Notebook %s: %s\n", path, plural(len(nb.cells), "cell"))
	for i, c := range nb.cells {
		var kind string
		_ = json.Unmarshal(c["cell_type"], &kind)
		fmt.Fprintf(&b, "\n<cell id=%q type=%q>\n%s", nb.cellID(i), kind, text(c["source"]))
		if !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.WriteString("</cell>\n")
		if out := renderOutputs(c["outputs"]); out != "" {
			fmt.Fprintf(&b, "<outputs id=%q>\n%s</outputs>\n", nb.cellID(i), out)
		}
		if b.Len() > maxBytes {
			fmt.Fprintf(&b, "\n[Output stopped after %d of %d cells to stay under %d bytes.]", i+1, len(nb.cells), maxBytes)
			break
		}
	}
	return b.String()
}

func renderOutputs(raw json.RawMessage) string {
	var outs []struct {
		OutputType string                     `json:"output_type"`
		Text       json.RawMessage            `json:"text"`
		Data       map[string]json.RawMessage `json:"data"`
		Ename      string                     `json:"ename"`
		Evalue     string                     `json:"evalue"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &outs) != nil {
		return ""
	}
	var b strings.Builder
	for _, o := range outs {
		var s string
		switch {
		case o.OutputType == "stream":
			s = text(o.Text)
		case o.OutputType == "error":
			s = o.Ename + ": " + o.Evalue
		case o.Data["text/plain"] != nil:
			s = text(o.Data["text/plain"])
		case len(o.Data) > 0:
			s = "[" + strings.Join(slices.Sorted(maps.Keys(o.Data)), ", ") + " output not shown]"
		}
		if s != "" {
			b.WriteString(s)
			if !strings.HasSuffix(s, "\n") {
				b.WriteByte('\n')
			}
		}
	}
	return b.String()
}

// readNotebook renders a notebook for Read; ok is false when the file is
// not a notebook after all, and Read falls back to text.
func (r *reader) readNotebook(env *tool.Env, path string) (tool.Result, bool) {
	data, err := readAll(env, path)
	if err != nil {
		return tool.Result{}, false
	}
	nb, err := parseNotebook(data)
	if err != nil {
		return tool.Result{}, false
	}
	record(env, path, false)
	return tool.Text(nb.render(path, r.cfg.MaxOutputBytes)), true
}
