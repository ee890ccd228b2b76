package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// InputError reports why a tool input does not match its schema. Problems
// name the field and the violation, one entry each, in a stable order.
type InputError struct {
	Problems []string
}

func (e *InputError) Error() string {
	return "invalid tool input: " + strings.Join(e.Problems, "; ")
}

// maxProblems bounds how many violations one InputError lists.
const maxProblems = 20

// ValidateInput checks input against a JSON schema. It returns an
// *InputError naming each violation (`"timeout": must be ≤ 600000`,
// `missing required field "file_path"`, `unknown field "foo"`, `input is
// not a JSON object`), or a plain error when the schema itself is unusable.
//
// Supported keywords: type (a name or a list), properties, required,
// additionalProperties (false or a schema), enum, const, minimum, maximum,
// exclusiveMinimum, exclusiveMaximum, minLength, maxLength, pattern (RE2
// syntax), items, minItems, maxItems, uniqueItems, anyOf, oneOf, allOf.
// Other keywords ($ref, format, …) are annotations here and are ignored, so
// schemas from outside (MCP servers) validate leniently rather than fail.
//
// "integer" means a JSON integer literal (no fraction or exponent) that fits
// in 64 bits, so a valid input always decodes into a Go int. Empty input is
// treated as {} (a streamed tool call with no input deltas). Duplicate keys
// follow encoding/json: the last one wins.
func ValidateInput(schema, input json.RawMessage) error {
	sch, err := decodeStrict(schema)
	if err != nil {
		return fmt.Errorf("invalid tool schema: %w", err)
	}
	root, ok := sch.(map[string]any)
	if !ok {
		return errors.New("invalid tool schema: not a JSON object")
	}
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage("{}")
	}
	val, err := decodeStrict(input)
	if err != nil {
		return &InputError{Problems: []string{"input is not valid JSON: " + err.Error()}}
	}
	if t, _ := root["type"].(string); t == "object" {
		if _, ok := val.(map[string]any); !ok {
			return &InputError{Problems: []string{"input is not a JSON object"}}
		}
	}
	v := validator{}
	v.check(root, val, "")
	if v.schemaErr != nil {
		return fmt.Errorf("invalid tool schema: %w", v.schemaErr)
	}
	if len(v.problems) > 0 {
		return &InputError{Problems: v.problems}
	}
	return nil
}

func decodeStrict(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return v, nil
}

type validator struct {
	problems  []string
	schemaErr error
}

func (v *validator) addf(path, format string, args ...any) {
	if len(v.problems) >= maxProblems {
		return
	}
	msg := fmt.Sprintf(format, args...)
	if path != "" {
		msg = strconv.Quote(path) + ": " + msg
	}
	v.problems = append(v.problems, msg)
}

func (v *validator) badSchema(format string, args ...any) {
	if v.schemaErr == nil {
		v.schemaErr = fmt.Errorf(format, args...)
	}
}

// check validates val against node. path names val for messages ("" for
// the root, "todos[1].status" below it).
func (v *validator) check(node map[string]any, val any, path string) {
	if !v.checkType(node, val, path) {
		return // other keywords would only repeat the type problem
	}
	if enum, ok := node["enum"]; ok {
		list, ok := enum.([]any)
		if !ok {
			v.badSchema("enum at %q is not a list", path)
		} else if !slices.ContainsFunc(list, func(e any) bool { return jsonEqual(e, val) }) {
			v.addf(path, "must be one of %s; got %s", showJSONList(list), showJSON(val))
		}
	}
	if c, ok := node["const"]; ok && !jsonEqual(c, val) {
		v.addf(path, "must be %s; got %s", showJSON(c), showJSON(val))
	}
	switch x := val.(type) {
	case json.Number:
		v.checkNumber(node, x, path)
	case string:
		v.checkString(node, x, path)
	case []any:
		v.checkArray(node, x, path)
	case map[string]any:
		v.checkObject(node, x, path)
	}
	v.checkCombinators(node, val, path)
}

func (v *validator) checkType(node map[string]any, val any, path string) bool {
	raw, ok := node["type"]
	if !ok {
		return true
	}
	var types []string
	switch t := raw.(type) {
	case string:
		types = []string{t}
	case []any:
		for _, e := range t {
			s, ok := e.(string)
			if !ok {
				v.badSchema("type at %q is not a string", path)
				return true
			}
			types = append(types, s)
		}
	default:
		v.badSchema("type at %q is not a string or list", path)
		return true
	}
	for _, t := range types {
		if jsonTypeIs(t, val) {
			return true
		}
	}
	if slices.Contains(types, "integer") {
		if n, ok := val.(json.Number); ok {
			if integralNumber(n) {
				v.addf(path, "integer out of range; got %s", n)
			} else {
				v.addf(path, "must be an integer; got %s", n)
			}
			return false
		}
	}
	v.addf(path, "must be %s; got %s", jsonTypeNames(types), showJSON(val))
	return false
}

func jsonTypeIs(t string, val any) bool {
	switch t {
	case "object":
		_, ok := val.(map[string]any)
		return ok
	case "array":
		_, ok := val.([]any)
		return ok
	case "string":
		_, ok := val.(string)
		return ok
	case "boolean":
		_, ok := val.(bool)
		return ok
	case "null":
		return val == nil
	case "number":
		_, ok := val.(json.Number)
		return ok
	case "integer":
		n, ok := val.(json.Number)
		if !ok || strings.ContainsAny(string(n), ".eE") {
			return false
		}
		_, err := strconv.ParseInt(string(n), 10, 64)
		return err == nil
	}
	return false
}

func integralNumber(n json.Number) bool {
	r, ok := new(big.Rat).SetString(string(n))
	return ok && r.IsInt() && !strings.ContainsAny(string(n), ".eE")
}

func jsonTypeNames(types []string) string {
	names := make([]string, len(types))
	for i, t := range types {
		switch t {
		case "object", "array", "integer":
			names[i] = "an " + t
		default:
			names[i] = "a " + t
		}
	}
	return strings.Join(names, " or ")
}

func (v *validator) checkNumber(node map[string]any, n json.Number, path string) {
	val, ok := new(big.Rat).SetString(string(n))
	if !ok {
		v.addf(path, "is not a number; got %s", n)
		return
	}
	bound := func(key string) (*big.Rat, string, bool) {
		raw, ok := node[key]
		if !ok {
			return nil, "", false
		}
		bn, ok := raw.(json.Number)
		r, ok2 := new(big.Rat).SetString(string(bn))
		if !ok || !ok2 {
			v.badSchema("%s at %q is not a number", key, path)
			return nil, "", false
		}
		return r, string(bn), true
	}
	if b, s, ok := bound("minimum"); ok && val.Cmp(b) < 0 {
		v.addf(path, "must be ≥ %s; got %s", s, n)
	}
	if b, s, ok := bound("maximum"); ok && val.Cmp(b) > 0 {
		v.addf(path, "must be ≤ %s; got %s", s, n)
	}
	if b, s, ok := bound("exclusiveMinimum"); ok && val.Cmp(b) <= 0 {
		v.addf(path, "must be > %s; got %s", s, n)
	}
	if b, s, ok := bound("exclusiveMaximum"); ok && val.Cmp(b) >= 0 {
		v.addf(path, "must be < %s; got %s", s, n)
	}
}

// intKeyword reads a non-negative integer keyword such as minLength.
func (v *validator) intKeyword(node map[string]any, key, path string) (int, bool) {
	raw, ok := node[key]
	if !ok {
		return 0, false
	}
	n, _ := raw.(json.Number)
	i, err := strconv.Atoi(string(n))
	if err != nil || i < 0 {
		v.badSchema("%s at %q is not a non-negative integer", key, path)
		return 0, false
	}
	return i, true
}

func (v *validator) checkString(node map[string]any, s, path string) {
	n := utf8.RuneCountInString(s)
	if m, ok := v.intKeyword(node, "minLength", path); ok && n < m {
		v.addf(path, "must be at least %d %s long", m, countNoun(m, "character"))
	}
	if m, ok := v.intKeyword(node, "maxLength", path); ok && n > m {
		v.addf(path, "must be at most %d %s long; got %d", m, countNoun(m, "character"), n)
	}
	if raw, ok := node["pattern"]; ok {
		p, _ := raw.(string)
		re, err := regexp.Compile(p)
		if err != nil {
			v.badSchema("pattern at %q: %v", path, err)
		} else if !re.MatchString(s) {
			v.addf(path, "must match the pattern %q", p)
		}
	}
}

func (v *validator) checkArray(node map[string]any, arr []any, path string) {
	if m, ok := v.intKeyword(node, "minItems", path); ok && len(arr) < m {
		v.addf(path, "must have at least %d %s; got %d", m, countNoun(m, "item"), len(arr))
	}
	if m, ok := v.intKeyword(node, "maxItems", path); ok && len(arr) > m {
		v.addf(path, "must have at most %d %s; got %d", m, countNoun(m, "item"), len(arr))
	}
	if u, _ := node["uniqueItems"].(bool); u {
	outer:
		for i := range arr {
			for j := range i {
				if jsonEqual(arr[i], arr[j]) {
					v.addf(path, "items %d and %d are equal; items must be unique", j, i)
					break outer
				}
			}
		}
	}
	switch items := node["items"].(type) {
	case nil:
	case map[string]any:
		for i, e := range arr {
			v.check(items, e, fmt.Sprintf("%s[%d]", path, i))
		}
	case []any: // tuple form (draft 4–2019)
		for i, e := range arr {
			if i < len(items) {
				if sub, ok := items[i].(map[string]any); ok {
					v.check(sub, e, fmt.Sprintf("%s[%d]", path, i))
				}
			}
		}
	case bool:
	default:
		v.badSchema("items at %q is not a schema", path)
	}
}

func (v *validator) checkObject(node map[string]any, obj map[string]any, path string) {
	props, _ := node["properties"].(map[string]any)
	if raw, ok := node["required"]; ok {
		req, ok := raw.([]any)
		if !ok {
			v.badSchema("required at %q is not a list", path)
		}
		for _, r := range req {
			name, _ := r.(string)
			if _, ok := obj[name]; !ok {
				v.problems = appendProblem(v.problems, fmt.Sprintf("missing required field %q", fieldPath(path, name)))
			}
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if sub, ok := props[k]; ok {
			switch s := sub.(type) {
			case map[string]any:
				v.check(s, obj[k], fieldPath(path, k))
			case bool:
				if !s {
					v.problems = appendProblem(v.problems, fmt.Sprintf("field %q is not allowed", fieldPath(path, k)))
				}
			default:
				v.badSchema("property %q is not a schema", fieldPath(path, k))
			}
			continue
		}
		switch ap := node["additionalProperties"].(type) {
		case bool:
			if !ap {
				v.problems = appendProblem(v.problems, fmt.Sprintf("unknown field %q", fieldPath(path, k)))
			}
		case map[string]any:
			v.check(ap, obj[k], fieldPath(path, k))
		}
	}
}

func (v *validator) checkCombinators(node map[string]any, val any, path string) {
	sub := func(key string) []map[string]any {
		raw, ok := node[key]
		if !ok {
			return nil
		}
		list, _ := raw.([]any)
		var out []map[string]any
		for _, e := range list {
			if m, ok := e.(map[string]any); ok {
				out = append(out, m)
			}
		}
		if len(out) == 0 {
			v.badSchema("%s at %q is not a list of schemas", key, path)
		}
		return out
	}
	passes := func(s map[string]any) bool {
		w := validator{}
		w.check(s, val, path)
		if w.schemaErr != nil {
			v.badSchema("%v", w.schemaErr)
		}
		return len(w.problems) == 0
	}
	for _, s := range sub("allOf") {
		v.check(s, val, path)
	}
	if alts := sub("anyOf"); len(alts) > 0 && !slices.ContainsFunc(alts, passes) {
		v.addf(path, "does not match any of the allowed forms")
	}
	if one := sub("oneOf"); len(one) > 0 {
		n := 0
		for _, s := range one {
			if passes(s) {
				n++
			}
		}
		if n != 1 {
			v.addf(path, "must match exactly one of the allowed forms; matches %d", n)
		}
	}
}

func appendProblem(list []string, s string) []string {
	if len(list) >= maxProblems {
		return list
	}
	return append(list, s)
}

func fieldPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func countNoun(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// jsonEqual compares decoded JSON values; numbers compare by value.
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		rx, ok1 := new(big.Rat).SetString(string(x))
		ry, ok2 := new(big.Rat).SetString(string(y))
		return ok1 && ok2 && rx.Cmp(ry) == 0
	case []any:
		y, ok := b.([]any)
		return ok && slices.EqualFunc(x, y, jsonEqual)
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !jsonEqual(xv, yv) {
				return false
			}
		}
		return true
	default:
		return a == b
	}
}

func showJSONList(list []any) string {
	parts := make([]string, len(list))
	for i, e := range list {
		parts[i] = showJSON(e)
	}
	return strings.Join(parts, ", ")
}

// show renders a JSON value briefly for an error message.
func showJSON(val any) string {
	switch x := val.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		if utf8.RuneCountInString(x) > 40 {
			x = string([]rune(x)[:40]) + "…"
		}
		return strconv.Quote(x)
	case bool:
		return strconv.FormatBool(x)
	case json.Number:
		return string(x)
	}
	return fmt.Sprint(val)
}
