package settings

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Collect decodes a top-level key from every source that sets it, lowest
// precedence first. A value that does not decode into T is left out and
// reported with its file, line and column. Readers of list-like sections
// (hooks) concatenate the results; readers of scalars use [Winner].
func Collect[T any](s *Settings, key string) ([]Sourced[T], []*Problem) {
	var out []Sourced[T]
	var probs []*Problem
	for _, src := range s.Sources {
		n := src.field(key)
		if n == nil {
			continue
		}
		var v T
		if err := json.Unmarshal(n.raw(src.data), &v); err != nil {
			probs = append(probs, decodeProblem(src, n, key, err))
			continue
		}
		line, col := lineCol(src.data, n.start)
		out = append(out, Sourced[T]{Value: v, Source: src, Line: line, Col: col})
	}
	return out, probs
}

// Winner returns the value of key from the highest-precedence source whose
// value decodes into T (for scalars such as "model").
func Winner[T any](s *Settings, key string) (Sourced[T], bool, []*Problem) {
	all, probs := Collect[T](s, key)
	if len(all) == 0 {
		return Sourced[T]{}, false, probs
	}
	return all[len(all)-1], true, probs
}

// MergeObject merges an object-valued key entry by entry across sources: a
// higher-precedence source overrides single entries, not the whole object
// (as "env" and "flags" behave). Each entry remembers the source that set
// it; entries that do not decode into V are reported and left out.
func MergeObject[V any](s *Settings, key string) (map[string]Sourced[V], []*Problem) {
	out := map[string]Sourced[V]{}
	var probs []*Problem
	for _, src := range s.Sources {
		n := src.field(key)
		if n == nil {
			continue
		}
		if n.kind != '{' {
			probs = append(probs, src.problemAt(n, key, fmt.Sprintf("must be an object, not %s; it is ignored", n.kindName())))
			continue
		}
		for _, k := range n.keys {
			fn := n.fields[k]
			var v V
			if err := json.Unmarshal(fn.raw(src.data), &v); err != nil {
				probs = append(probs, decodeProblem(src, fn, key+"."+k, err))
				continue
			}
			line, col := lineCol(src.data, fn.start)
			out[k] = Sourced[V]{Value: v, Source: src, Line: line, Col: col}
		}
	}
	return out, probs
}

func decodeProblem(src *Source, n *node, key string, err error) *Problem {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		where := key
		if te.Field != "" {
			where = key + "." + te.Field
		}
		p := &Problem{Path: src.Path, Key: where,
			Msg: fmt.Sprintf("wrong type: expected %s, found %s; the value is ignored", goTypeName(te), te.Value)}
		p.Line, p.Col = lineCol(src.data, n.start+int(te.Offset))
		if te.Offset == 0 {
			p.Line, p.Col = lineCol(src.data, n.start)
		}
		return p
	}
	return src.problemAt(n, key, err.Error()+"; the value is ignored")
}

func goTypeName(te *json.UnmarshalTypeError) string {
	if te.Type == nil {
		return "another type"
	}
	switch te.Type.Kind().String() {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	case "int", "int64", "int32", "uint", "uint64", "float64", "float32":
		return "a number"
	}
	return te.Type.String()
}
