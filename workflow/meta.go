package workflow

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/parser"
)

// Script is a loaded, checked workflow script: its meta was a pure literal
// and its body compiles as the body of an async function.
type Script struct {
	Name   string // file name used in error messages
	Source string // the script as written
	Meta   Meta
	body   string // Source with the export keyword blanked, wrapped as a function
}

var exportMeta = regexp.MustCompile(`(?m)^export(\s+const\s+meta\b)`)

// wrapPrefix goes on line 1 without a newline so the script's line numbers
// are the wrapper's line numbers.
const wrapPrefix = "(async function(args, workflow) {"

// Load parses src, checks that its meta is a pure literal and returns the
// script ready to run. Nothing in the script runs here.
func Load(name, src string) (*Script, error) {
	if !exportMeta.MatchString(src) {
		return nil, fmt.Errorf("%s: the script must begin with `export const meta = {name, description, ...}`", name)
	}
	// Blank "export" with spaces so columns stay where the author wrote them.
	plain := exportMeta.ReplaceAllString(src, "      $1")
	body := wrapPrefix + plain + "\n})"
	prog, err := parser.ParseFile(nil, name, body, 0)
	if err != nil {
		var list parser.ErrorList
		if errors.As(err, &list) && len(list) > 0 {
			e := list[0]
			return nil, fmt.Errorf("%s:%d:%d: the script does not parse: %s", name, e.Position.Line, e.Position.Column, e.Message)
		}
		return nil, fmt.Errorf("%s: the script does not parse: %v", name, err)
	}
	init, err := findMeta(prog)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	v, err := literal(prog.File, init)
	if err != nil {
		return nil, fmt.Errorf("%s: meta must be a pure literal (no variables, calls, spreads or interpolation): %v", name, err)
	}
	meta, err := toMeta(v)
	if err != nil {
		return nil, fmt.Errorf("%s: meta: %v", name, err)
	}
	return &Script{Name: name, Source: src, Meta: meta, body: body}, nil
}

// findMeta returns the initializer of the top-level `const meta`.
func findMeta(prog *ast.Program) (ast.Expression, error) {
	if len(prog.Body) != 1 {
		return nil, fmt.Errorf("unexpected statements after the script body")
	}
	es, ok := prog.Body[0].(*ast.ExpressionStatement)
	if !ok {
		return nil, fmt.Errorf("unexpected script shape")
	}
	fn, ok := es.Expression.(*ast.FunctionLiteral)
	if !ok {
		return nil, fmt.Errorf("unexpected script shape")
	}
	for _, st := range fn.Body.List {
		ld, ok := st.(*ast.LexicalDeclaration)
		if !ok {
			continue
		}
		for _, b := range ld.List {
			if id, ok := b.Target.(*ast.Identifier); ok && id.Name == "meta" {
				if b.Initializer == nil {
					return nil, fmt.Errorf("meta has no value")
				}
				return b.Initializer, nil
			}
		}
	}
	return nil, fmt.Errorf("no top-level `export const meta`")
}

// literal evaluates a pure literal expression, refusing anything that would
// need the script to run.
func literal(f *file.File, e ast.Expression) (any, error) {
	at := func() string { return fmt.Sprintf("line %d", f.Position(int(e.Idx0())).Line) }
	switch e := e.(type) {
	case *ast.StringLiteral:
		return e.Value.String(), nil
	case *ast.NumberLiteral:
		return e.Value, nil
	case *ast.BooleanLiteral:
		return e.Value, nil
	case *ast.NullLiteral:
		return nil, nil
	case *ast.TemplateLiteral:
		if e.Tag != nil || len(e.Expressions) > 0 {
			return nil, fmt.Errorf("%s: a template with interpolation", at())
		}
		var sb strings.Builder
		for _, el := range e.Elements {
			sb.WriteString(el.Parsed.String())
		}
		return sb.String(), nil
	case *ast.ArrayLiteral:
		out := make([]any, 0, len(e.Value))
		for _, x := range e.Value {
			v, err := literal(f, x)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case *ast.ObjectLiteral:
		out := map[string]any{}
		for _, p := range e.Value {
			kp, ok := p.(*ast.PropertyKeyed)
			if !ok || kp.Computed || kp.Kind != ast.PropertyKindValue {
				return nil, fmt.Errorf("%s: only `key: value` properties are allowed", at())
			}
			var key string
			switch k := kp.Key.(type) {
			case *ast.StringLiteral:
				key = k.Value.String()
			case *ast.Identifier:
				key = k.Name.String()
			default:
				return nil, fmt.Errorf("%s: a property key must be a name or a string", at())
			}
			v, err := literal(f, kp.Value)
			if err != nil {
				return nil, err
			}
			out[key] = v
		}
		return out, nil
	case *ast.Identifier:
		return nil, fmt.Errorf("%s: the variable %q", at(), e.Name)
	case *ast.CallExpression:
		return nil, fmt.Errorf("%s: a call", at())
	case *ast.SpreadElement:
		return nil, fmt.Errorf("%s: a spread", at())
	default:
		return nil, fmt.Errorf("%s: a %T expression", at(), e)
	}
}

func toMeta(v any) (Meta, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return Meta{}, fmt.Errorf("must be an object")
	}
	str := func(m map[string]any, k string, required bool) (string, error) {
		x, ok := m[k]
		if !ok {
			if required {
				return "", fmt.Errorf("%q is required", k)
			}
			return "", nil
		}
		s, ok := x.(string)
		if !ok {
			return "", fmt.Errorf("%q must be a string", k)
		}
		return s, nil
	}
	var m Meta
	var err error
	if m.Name, err = str(obj, "name", true); err != nil {
		return m, err
	}
	if m.Description, err = str(obj, "description", true); err != nil {
		return m, err
	}
	if m.WhenToUse, err = str(obj, "whenToUse", false); err != nil {
		return m, err
	}
	if ps, ok := obj["phases"]; ok {
		list, ok := ps.([]any)
		if !ok {
			return m, fmt.Errorf(`"phases" must be an array`)
		}
		for i, p := range list {
			po, ok := p.(map[string]any)
			if !ok {
				return m, fmt.Errorf("phases[%d] must be an object", i)
			}
			var ph Phase
			if ph.Title, err = str(po, "title", true); err != nil {
				return m, fmt.Errorf("phases[%d]: %v", i, err)
			}
			if ph.Detail, err = str(po, "detail", false); err != nil {
				return m, fmt.Errorf("phases[%d]: %v", i, err)
			}
			if ph.Model, err = str(po, "model", false); err != nil {
				return m, fmt.Errorf("phases[%d]: %v", i, err)
			}
			m.Phases = append(m.Phases, ph)
		}
	}
	return m, nil
}
