package tool

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var testSchema = Object(
	Required("file_path", String("An absolute path.").WithMinLength(1)),
	Optional("timeout", Integer("Milliseconds.").WithMin(1).WithMax(600000)),
	Optional("ratio", Number("A fraction.").WithMin(0).WithMax(1)),
	Optional("mode", Enum("How.", "content", "files_with_matches", "count")),
	Optional("flag", Boolean("A switch.")),
	Optional("todos", Array("Items.", Object(
		Required("content", String("What.").WithMinLength(1)),
		Required("status", Enum("State.", "pending", "in_progress", "completed")),
	)).WithMinItems(1).WithMaxItems(3)),
	Optional("name", String("Short.").WithMaxLength(3)),
).JSON()

func TestSchemaJSON(t *testing.T) {
	got := string(Object(
		Required("b", String("Say <hi> & \"bye\".")),
		Optional("a", Integer("").WithMin(1).WithMax(600000)),
		Optional("c", Array("", Enum("", "x", "y")).WithMinItems(1)),
	).JSON())
	want := `{"type":"object","properties":{"b":{"type":"string","description":"Say <hi> & \"bye\"."},` +
		`"a":{"type":"integer","minimum":1,"maximum":600000},` +
		`"c":{"type":"array","items":{"type":"string","enum":["x","y"]},"minItems":1}},` +
		`"required":["b"],"additionalProperties":false}`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("schema bytes (-want +got):\n%s", diff)
	}
	if !json.Valid([]byte(got)) {
		t.Errorf("schema is not valid JSON")
	}
	if again := string(Object(
		Required("b", String("Say <hi> & \"bye\".")),
		Optional("a", Integer("").WithMin(1).WithMax(600000)),
		Optional("c", Array("", Enum("", "x", "y")).WithMinItems(1)),
	).JSON()); again != got {
		t.Errorf("schema bytes differ between builds")
	}
	m, err := json.Marshal(struct{ S Schema }{Object()})
	if err != nil || string(m) != `{"S":{"type":"object","properties":{},"additionalProperties":false}}` {
		t.Errorf("Marshal = %s, %v", m, err)
	}
}

func TestValidateInput(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  []string // nil: valid
	}{
		{"minimal", `{"file_path":"/a"}`, nil},
		{"all fields", `{"file_path":"/a","timeout":600000,"ratio":0.5,"mode":"count","flag":true,
			"todos":[{"content":"x","status":"pending"}],"name":"abc"}`, nil},
		{"unicode length counts characters", `{"file_path":"/a","name":"äöü"}`, nil},
		{"whitespace around", " \n{\"file_path\":\"/a\"}\n ", nil},
		{"not json", `{"file_path":`, []string{"input is not valid JSON: unexpected EOF"}},
		{"trailing data", `{"file_path":"/a"} {}`, []string{"input is not valid JSON: unexpected data after the JSON value"}},
		{"array input", `["file_path"]`, []string{"input is not a JSON object"}},
		{"string input", `"x"`, []string{"input is not a JSON object"}},
		{"null input", `null`, []string{"input is not a JSON object"}},
		{"empty input is an empty object", ``, []string{`missing required field "file_path"`}},
		{"missing", `{}`, []string{`missing required field "file_path"`}},
		{"unknown", `{"file_path":"/a","foo":1}`, []string{`unknown field "foo"`}},
		{"too big", `{"file_path":"/a","timeout":600001}`, []string{`"timeout": must be ≤ 600000; got 600001`}},
		{"too small", `{"file_path":"/a","timeout":0}`, []string{`"timeout": must be ≥ 1; got 0`}},
		{"fraction for integer", `{"file_path":"/a","timeout":1.5}`, []string{`"timeout": must be an integer; got 1.5`}},
		{"integral float for integer", `{"file_path":"/a","timeout":2.0}`, []string{`"timeout": must be an integer; got 2.0`}},
		{"huge integer", `{"file_path":"/a","timeout":123456789012345678901234567890}`,
			[]string{`"timeout": integer out of range; got 123456789012345678901234567890`}},
		{"string for integer", `{"file_path":"/a","timeout":"100"}`, []string{`"timeout": must be an integer; got "100"`}},
		{"number range", `{"file_path":"/a","ratio":1.01}`, []string{`"ratio": must be ≤ 1; got 1.01`}},
		{"number exponent ok", `{"file_path":"/a","ratio":5e-1}`, nil},
		{"bool for string", `{"file_path":true}`, []string{`"file_path": must be a string; got true`}},
		{"null for string", `{"file_path":null}`, []string{`"file_path": must be a string; got null`}},
		{"min length", `{"file_path":""}`, []string{`"file_path": must be at least 1 character long`}},
		{"max length", `{"file_path":"/a","name":"abcd"}`, []string{`"name": must be at most 3 characters long; got 4`}},
		{"enum", `{"file_path":"/a","mode":"lines"}`,
			[]string{`"mode": must be one of "content", "files_with_matches", "count"; got "lines"`}},
		{"object for bool", `{"file_path":"/a","flag":{}}`, []string{`"flag": must be a boolean; got an object`}},
		{"array for array items", `{"file_path":"/a","todos":[]}`, []string{`"todos": must have at least 1 item; got 0`}},
		{"too many items", `{"file_path":"/a","todos":[{"content":"a","status":"pending"},{"content":"b","status":"pending"},
			{"content":"c","status":"pending"},{"content":"d","status":"pending"}]}`, []string{`"todos": must have at most 3 items; got 4`}},
		{"nested", `{"file_path":"/a","todos":[{"content":"a","status":"done"},{"status":"pending","priority":"high"}]}`, []string{
			`"todos[0].status": must be one of "pending", "in_progress", "completed"; got "done"`,
			`missing required field "todos[1].content"`,
			`unknown field "todos[1].priority"`,
		}},
		{"array not object", `{"file_path":"/a","todos":{"content":"a"}}`, []string{`"todos": must be an array; got an object`}},
		{"several problems in stable order", `{"zeta":1,"alpha":2,"timeout":-1}`, []string{
			`missing required field "file_path"`,
			`unknown field "alpha"`,
			`"timeout": must be ≥ 1; got -1`,
			`unknown field "zeta"`,
		}},
		{"duplicate key last wins", `{"file_path":1,"file_path":"/a"}`, nil},
		{"long string shown briefly", `{"file_path":"/a","timeout":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}`,
			[]string{`"timeout": must be an integer; got "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateInput(testSchema, json.RawMessage(tt.input))
			var got []string
			if err != nil {
				var ie *InputError
				if !errors.As(err, &ie) {
					t.Fatalf("error %v is not an *InputError", err)
				}
				got = ie.Problems
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateInputKeywords(t *testing.T) {
	tests := []struct {
		name, schema, input string
		ok                  bool
	}{
		{"type list", `{"type":["string","null"]}`, `null`, true},
		{"type list miss", `{"type":["string","null"]}`, `1`, false},
		{"pattern", `{"type":"string","pattern":"^[a-z]+$"}`, `"abc"`, true},
		{"pattern miss", `{"type":"string","pattern":"^[a-z]+$"}`, `"ab1"`, false},
		{"const", `{"const":3}`, `3.0`, true},
		{"const miss", `{"const":"a"}`, `"b"`, false},
		{"exclusive min", `{"type":"number","exclusiveMinimum":0}`, `0`, false},
		{"exclusive max", `{"type":"number","exclusiveMaximum":1}`, `0.99`, true},
		{"unique", `{"type":"array","uniqueItems":true}`, `[1,"1",{"a":[1]},{"a":[1.0]}]`, false},
		{"unique ok", `{"type":"array","uniqueItems":true}`, `[1,2,[1],[2]]`, true},
		{"additional schema", `{"type":"object","additionalProperties":{"type":"integer"}}`, `{"a":1,"b":2}`, true},
		{"additional schema miss", `{"type":"object","additionalProperties":{"type":"integer"}}`, `{"a":"x"}`, false},
		{"additional default allowed", `{"type":"object","properties":{}}`, `{"a":"x"}`, true},
		{"anyOf", `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `7`, true},
		{"anyOf miss", `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `true`, false},
		{"oneOf two match", `{"oneOf":[{"type":"number"},{"type":"integer"}]}`, `7`, false},
		{"oneOf", `{"oneOf":[{"type":"number"},{"type":"integer"}]}`, `7.5`, true},
		{"allOf", `{"allOf":[{"minimum":1},{"maximum":2}]}`, `3`, false},
		{"tuple items", `{"type":"array","items":[{"type":"string"},{"type":"integer"}]}`, `["a",1,true]`, true},
		{"tuple items miss", `{"type":"array","items":[{"type":"string"}]}`, `[1]`, false},
		{"unknown keywords ignored", `{"type":"string","format":"uri","$ref":"#/x"}`, `"x"`, true},
		{"false property", `{"type":"object","properties":{"a":false}}`, `{"a":1}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateInput(json.RawMessage(tt.schema), json.RawMessage(tt.input))
			if (err == nil) != tt.ok {
				t.Errorf("ValidateInput(%s, %s) = %v, want ok=%v", tt.schema, tt.input, err, tt.ok)
			}
		})
	}
}

func TestValidateInputBadSchema(t *testing.T) {
	for _, tt := range []struct{ schema, input string }{
		{``, `"x"`}, {`[]`, `"x"`}, {`{"type":7}`, `"x"`}, {`{"type":"string","pattern":"("}`, `"x"`},
		{`{"type":"string","minLength":-1}`, `"x"`}, {`{"enum":"a"}`, `"x"`},
		{`{"type":"integer","minimum":"1"}`, `1`}, {`{"anyOf":[]}`, `"x"`},
		{`{"type":"object","required":"a"}`, `{}`},
	} {
		err := ValidateInput(json.RawMessage(tt.schema), json.RawMessage(tt.input))
		var ie *InputError
		if err == nil || errors.As(err, &ie) {
			t.Errorf("schema %s: got %v, want a schema error", tt.schema, err)
		}
	}
}

func FuzzValidateInput(f *testing.F) {
	f.Add(string(testSchema), `{"file_path":"/a","todos":[{"content":"x","status":"pending"}]}`)
	f.Add(string(testSchema), `{"timeout":1e400}`)
	f.Add(`{"type":"array","items":{"anyOf":[{"type":"string"}]},"uniqueItems":true}`, `[[],[],{}]`)
	f.Add(`{"oneOf":[{"const":1}],"enum":[1,2]}`, `1.000`)
	f.Add(`{"type":"string","pattern":"\\d+","maxLength":2}`, `"1234"`)
	f.Fuzz(func(t *testing.T, schema, input string) {
		err := ValidateInput(json.RawMessage(schema), json.RawMessage(input))
		var ie *InputError
		if errors.As(err, &ie) && len(ie.Problems) == 0 {
			t.Errorf("InputError without problems")
		}
		if errors.As(err, &ie) && len(ie.Problems) > maxProblems {
			t.Errorf("%d problems, cap is %d", len(ie.Problems), maxProblems)
		}
	})
}

func BenchmarkValidateInput(b *testing.B) {
	input := json.RawMessage(`{"file_path":"/a/b.go","timeout":1000,"mode":"count","todos":[{"content":"x","status":"pending"}]}`)
	for b.Loop() {
		if err := ValidateInput(testSchema, input); err != nil {
			b.Fatal(err)
		}
	}
}
