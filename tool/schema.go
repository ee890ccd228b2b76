package tool

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/cohort-dev/cohort/internal/jsonstr"
)

// Schema is a JSON Schema for a tool's input, built in Go so that it always
// marshals to the same bytes (tool schemas are part of the cached prompt
// prefix). Keys are written in a fixed order and properties keep the order
// they were declared in. Build one with Object, String, Integer, … and the
// With* methods; call JSON to get the bytes for llm.ToolDef.InputSchema.
//
// A Schema is a plain value: the With* methods return modified copies.
type Schema struct {
	Type        string // "object", "string", "integer", "number", "boolean", "array"
	Description string
	Enum        []string
	Minimum     *float64
	Maximum     *float64
	MinLength   *int
	MaxLength   *int
	Items       *Schema
	MinItems    *int
	MaxItems    *int
	Properties  []Property
	// Closed writes "additionalProperties": false.
	Closed bool
}

// Property is one named property of an object schema.
type Property struct {
	Name     string
	Schema   Schema
	Required bool
}

// Object returns a closed object schema (unknown fields are rejected) with
// props in the given order.
func Object(props ...Property) Schema {
	return Schema{Type: "object", Properties: props, Closed: true}
}

// Required declares a property the input must have.
func Required(name string, s Schema) Property { return Property{Name: name, Schema: s, Required: true} }

// Optional declares a property the input may omit.
func Optional(name string, s Schema) Property { return Property{Name: name, Schema: s} }

// String returns a string schema.
func String(desc string) Schema { return Schema{Type: "string", Description: desc} }

// Integer returns an integer schema.
func Integer(desc string) Schema { return Schema{Type: "integer", Description: desc} }

// Number returns a number schema.
func Number(desc string) Schema { return Schema{Type: "number", Description: desc} }

// Boolean returns a boolean schema.
func Boolean(desc string) Schema { return Schema{Type: "boolean", Description: desc} }

// Array returns an array schema whose elements match items.
func Array(desc string, items Schema) Schema {
	return Schema{Type: "array", Description: desc, Items: &items}
}

// Enum returns a string schema that accepts only values.
func Enum(desc string, values ...string) Schema {
	return Schema{Type: "string", Description: desc, Enum: values}
}

// WithMin sets the inclusive minimum of a number or integer.
func (s Schema) WithMin(v float64) Schema { s.Minimum = &v; return s }

// WithMax sets the inclusive maximum of a number or integer.
func (s Schema) WithMax(v float64) Schema { s.Maximum = &v; return s }

// WithMinLength sets the minimum length of a string, in characters.
func (s Schema) WithMinLength(n int) Schema { s.MinLength = &n; return s }

// WithMaxLength sets the maximum length of a string, in characters.
func (s Schema) WithMaxLength(n int) Schema { s.MaxLength = &n; return s }

// WithMinItems sets the minimum length of an array.
func (s Schema) WithMinItems(n int) Schema { s.MinItems = &n; return s }

// WithMaxItems sets the maximum length of an array.
func (s Schema) WithMaxItems(n int) Schema { s.MaxItems = &n; return s }

// JSON returns the schema's canonical bytes.
func (s Schema) JSON() json.RawMessage {
	var b bytes.Buffer
	s.write(&b)
	return b.Bytes()
}

// MarshalJSON implements json.Marshaler with the canonical bytes.
func (s Schema) MarshalJSON() ([]byte, error) { return s.JSON(), nil }

func (s Schema) write(b *bytes.Buffer) {
	first := true
	key := func(k string) {
		if !first {
			b.WriteByte(',')
		}
		first = false
		writeJSONString(b, k)
		b.WriteByte(':')
	}
	b.WriteByte('{')
	if s.Type != "" {
		key("type")
		writeJSONString(b, s.Type)
	}
	if s.Description != "" {
		key("description")
		writeJSONString(b, s.Description)
	}
	if s.Enum != nil {
		key("enum")
		b.WriteByte('[')
		for i, v := range s.Enum {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, v)
		}
		b.WriteByte(']')
	}
	writeNum := func(k string, v *float64) {
		if v != nil {
			key(k)
			b.WriteString(strconv.FormatFloat(*v, 'f', -1, 64))
		}
	}
	writeInt := func(k string, v *int) {
		if v != nil {
			key(k)
			b.WriteString(strconv.Itoa(*v))
		}
	}
	writeNum("minimum", s.Minimum)
	writeNum("maximum", s.Maximum)
	writeInt("minLength", s.MinLength)
	writeInt("maxLength", s.MaxLength)
	if s.Items != nil {
		key("items")
		s.Items.write(b)
	}
	writeInt("minItems", s.MinItems)
	writeInt("maxItems", s.MaxItems)
	if s.Type == "object" || len(s.Properties) > 0 {
		key("properties")
		b.WriteByte('{')
		var req []string
		for i, p := range s.Properties {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, p.Name)
			b.WriteByte(':')
			p.Schema.write(b)
			if p.Required {
				req = append(req, p.Name)
			}
		}
		b.WriteByte('}')
		if len(req) > 0 {
			key("required")
			b.WriteByte('[')
			for i, r := range req {
				if i > 0 {
					b.WriteByte(',')
				}
				writeJSONString(b, r)
			}
			b.WriteByte(']')
		}
	}
	if s.Closed {
		key("additionalProperties")
		b.WriteString("false")
	}
	b.WriteByte('}')
}

// writeJSONString writes s as a JSON string without HTML escaping, so
// prose in descriptions stays readable on the wire: the bytes a json.Encoder
// with SetEscapeHTML(false) writes, without building one per string.
func writeJSONString(b *bytes.Buffer, s string) {
	b.Write(jsonstr.Append(b.AvailableBuffer(), s))
}
