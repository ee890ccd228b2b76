package tool

import (
	"bytes"
	"encoding/json"
)

// DropNulls returns input without the top-level fields t reads as absent
// when they are null (its Def's NullAsAbsent, as Claude Code's tool of the
// same name reads them; the schema the model sees declares no null);
// input itself when it has none of them.
func DropNulls(t Tool, input json.RawMessage) json.RawMessage {
	fields := t.Def().NullAsAbsent
	if len(fields) == 0 || !bytes.Contains(input, []byte("null")) {
		return input
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(input, &obj) != nil {
		return input // the validator says what is wrong
	}
	dropped := false
	for _, k := range fields {
		if v, ok := obj[k]; ok && string(bytes.TrimSpace(v)) == "null" {
			delete(obj, k)
			dropped = true
		}
	}
	if !dropped {
		return input
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return input
	}
	return out
}
