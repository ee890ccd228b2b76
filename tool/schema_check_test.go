package tool

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCheckSchema(t *testing.T) {
	for _, tc := range []struct{ schema, err string }{
		{`{"type": "object", "properties": {"a": {"type": ["string", "null"], "pattern": "^x"}}, "required": ["a"]}`, ""},
		{`{"anyOf": [{"type": "integer", "minimum": 1}, true]}`, ""},
		{`{"type": "array", "items": {"enum": [1, 2]}, "minItems": 1}`, ""},
		{`{"x-custom": 1, "$ref": "#/$defs/a", "$defs": {"a": {"type": "string"}}}`, ""},
		{`{"type": "text"}`, `type: "text" is not a type`},
		{`{"properties": {"a": {"pattern": "("}}}`, "properties.a.pattern:"},
		{`{"required": "a"}`, "required: want an array"},
		{`{"anyOf": []}`, "anyOf: want a non-empty array"},
		{`{"items": 3}`, "items: a schema is an object or a boolean, not a number"},
		{`{"maxLength": 1.5}`, "maxLength: want a non-negative integer"},
		{`"object"`, "a schema is a JSON object, not a string"},
		{`{"type": "object"} {}`, "not JSON"},
	} {
		err := CheckSchema(json.RawMessage(tc.schema))
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: %v, want %q", tc.schema, err, tc.err)
		}
	}
}
