package tool

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestCheckSchema(t *testing.T) {
	for _, tc := range []struct{ schema, err string }{
		{`{"type": "object", "properties": {"a": {"type": ["string", "null"], "pattern": "^x"}}, "required": ["a"]}`, ""},
		{`{"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]}`, ""},
		{`{"oneOf": [true]}`, "oneOf[0]: want a schema object"},
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

// FuzzCheckSchema: CheckSchema never panics, and a schema it accepts never
// makes ValidateInput report the schema as unusable (what --json-schema
// relies on: a bad schema is refused up front, not after a model call).
func FuzzCheckSchema(f *testing.F) {
	for _, s := range []string{`{"type": "object", "properties": {"a": {"type": "string", "pattern": "^a"}}, "required": ["a"]}`,
		`{"anyOf": [{"type": "integer", "minimum": 1}, {"enum": [1, "x"]}]}`, `{"items": {"type": "array", "maxItems": 2}}`,
		`{"type": ["string", "null"], "minLength": 1}`, `{"additionalProperties": {"type": "boolean"}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, schema string) {
		if CheckSchema(json.RawMessage(schema)) != nil {
			return
		}
		for _, v := range []string{`null`, `1`, `1.5`, `"s"`, `true`, `[1, "a", {}]`, `{"a": "b", "c": [1]}`} {
			if err := ValidateInput(json.RawMessage(schema), json.RawMessage(v)); err != nil {
				var ie *InputError
				if !errors.As(err, &ie) {
					t.Fatalf("CheckSchema accepted %s, but validating %s says: %v", schema, v, err)
				}
			}
		}
	})
}
