package tool

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// schemaTypes are the names "type" may give.
var schemaTypes = []string{"object", "array", "string", "number", "integer", "boolean", "null"}

// CheckSchema reports whether schema is a JSON schema ValidateInput can
// use: a JSON object (or true/false) whose keywords have the shapes JSON
// Schema gives them. The error names the keyword by its path in the schema
// ("properties.age.type") and what is wrong. Keywords ValidateInput does
// not know are left alone, as ValidateInput leaves them.
func CheckSchema(schema json.RawMessage) error {
	v, err := decodeStrict(schema)
	if err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return fmt.Errorf("a schema is a JSON object, not %s", jsonKind(v))
	}
	return checkNode(v, "")
}

func checkNode(v any, path string) error {
	if _, ok := v.(bool); ok {
		return nil
	}
	node, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: a schema is an object or a boolean, not %s", where(path), jsonKind(v))
	}
	keys := make([]string, 0, len(node))
	for k := range node {
		keys = append(keys, k)
	}
	slices.Sort(keys) // the first problem in a stable order
	for _, k := range keys {
		if err := checkKeyword(k, node[k], join(path, k)); err != nil {
			return err
		}
	}
	return nil
}

func checkKeyword(k string, val any, path string) error {
	switch k {
	case "type":
		names := []any{val}
		if list, ok := val.([]any); ok {
			names = list
		}
		for _, n := range names {
			s, ok := n.(string)
			if !ok || !slices.Contains(schemaTypes, s) {
				return fmt.Errorf("%s: %s is not a type; use %s", where(path), show(n), strings.Join(schemaTypes, ", "))
			}
		}
	case "properties", "$defs", "definitions", "patternProperties":
		m, ok := val.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want an object of schemas, not %s", where(path), jsonKind(val))
		}
		for name, sub := range m {
			if err := checkNode(sub, join(path, name)); err != nil {
				return err
			}
		}
	case "additionalProperties", "items", "not", "contains", "propertyNames":
		if list, ok := val.([]any); ok && k == "items" {
			for i, sub := range list {
				if err := checkNode(sub, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
			return nil
		}
		return checkNode(val, path)
	case "anyOf", "oneOf", "allOf":
		list, ok := val.([]any)
		if !ok || len(list) == 0 {
			return fmt.Errorf("%s: want a non-empty array of schemas", where(path))
		}
		for i, sub := range list {
			if _, ok := sub.(map[string]any); !ok { // as ValidateInput reads them
				return fmt.Errorf("%s[%d]: want a schema object, not %s", path, i, jsonKind(sub))
			}
			if err := checkNode(sub, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	case "required":
		list, ok := val.([]any)
		if !ok {
			return fmt.Errorf("%s: want an array of property names, not %s", where(path), jsonKind(val))
		}
		for _, n := range list {
			if _, ok := n.(string); !ok {
				return fmt.Errorf("%s: %s is not a property name", where(path), show(n))
			}
		}
	case "enum":
		if _, ok := val.([]any); !ok {
			return fmt.Errorf("%s: want an array of values, not %s", where(path), jsonKind(val))
		}
	case "pattern":
		s, ok := val.(string)
		if !ok {
			return fmt.Errorf("%s: want a regular expression string", where(path))
		}
		if _, err := regexp.Compile(s); err != nil {
			return fmt.Errorf("%s: %v", where(path), err)
		}
	case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf":
		if _, ok := val.(json.Number); !ok {
			return fmt.Errorf("%s: want a number, not %s", where(path), jsonKind(val))
		}
	case "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties":
		n, ok := val.(json.Number)
		if i, err := n.Int64(); !ok || err != nil || i < 0 {
			return fmt.Errorf("%s: want a non-negative integer, not %s", where(path), show(val))
		}
	}
	return nil
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

func where(path string) string {
	if path == "" {
		return "the schema"
	}
	return path
}

func show(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "an object"
}
