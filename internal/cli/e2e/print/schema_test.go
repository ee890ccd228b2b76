package print

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

const personSchema = `{"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}}, "required": ["name", "age"], "additionalProperties": false}`

// TestJSONSchemaAsksAgain: an answer that does not match --json-schema is
// sent back with what is wrong; the matching one is structured_output.
func TestJSONSchemaAsksAgain(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var sawSchema bool
	var correction string
	h := clitest.New(t, func(r *fakeapi.Request) fakeapi.Reply {
		mu.Lock()
		defer mu.Unlock()
		switch r.Turn() {
		case 0:
			sawSchema = strings.Contains(r.FirstUserText(), `"required": ["name", "age"]`)
			return fakeapi.TextReply(`{"name": "Ada", "age": "old"}`)
		case 1:
			correction = r.LastUserText()
			return fakeapi.TextReply("```json\n{\"name\": \"Ada\", \"age\": 36}\n```")
		}
		return fakeapi.TextReply("too many turns")
	})
	out, errOut, code := h.RunBinary("-p", "who wrote the first program?", "--output-format", "json", "--json-schema", personSchema)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	r := h.Result(out)
	if got, _ := json.Marshal(r.StructuredOutput); string(got) != `{"age":36,"name":"Ada"}` || r.IsError || r.NumTurns != 2 {
		t.Fatalf("result = %+v (structured_output %s)", r, got)
	}
	if !strings.Contains(out, `"structured_output":{"name":"Ada","age":36}`) {
		t.Fatalf("structured_output is not the answer's JSON:\n%s", out)
	}
	if !sawSchema || !strings.Contains(correction, `"age"`) || !strings.Contains(correction, "attempt 2 of 5") {
		t.Fatalf("the schema reached the prompt: %v; the correction said: %q", sawSchema, correction)
	}
}

// TestJSONSchemaGivesUp: a model that never matches fails the run after
// five answers with Claude Code's subtype, naming the last problem.
func TestJSONSchemaGivesUp(t *testing.T) {
	t.Parallel()
	h := clitest.New(t, func(*fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("Ada, 36") })
	out, errOut, code := h.RunBinary("-p", "who?", "--output-format", "json", "--json-schema", personSchema)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	r := h.Result(out)
	if r.Subtype != "error_max_structured_output_retries" || !r.IsError || !strings.Contains(r.Result, "after 5 attempts") ||
		!strings.Contains(r.Result, "not a JSON value") || r.StructuredOutput != nil {
		t.Fatalf("result = %+v", r)
	}
	if n := len(h.Srv.Requests()); n != 5 {
		t.Fatalf("%d requests, want 5 answers", n)
	}
}

// TestJSONSchemaInvalid: a schema that is not one is a usage error naming
// the keyword, before any request.
func TestJSONSchemaInvalid(t *testing.T) {
	t.Parallel()
	h := clitest.New(t, nil)
	for schema, want := range map[string]string{
		`{"type": "obj"}`:                          `type: "obj" is not a type`,
		`{"properties": {"a": {"minLength": -1}}}`: "properties.a.minLength: want a non-negative integer",
		`{"type": "object"`:                        "not JSON",
		`[1, 2]`:                                   "a schema is a JSON object",
	} {
		out, errOut, code := h.RunBinary("-p", "x", "--json-schema", schema, "--output-format", "json")
		if code != 2 || !strings.Contains(errOut, "--json-schema is not a usable JSON schema") || !strings.Contains(errOut, want) {
			t.Errorf("%s: exit %d, stderr %s", schema, code, errOut)
		}
		if r := h.Result(out); !r.IsError {
			t.Errorf("%s: result %+v", schema, r)
		}
	}
	if n := len(h.Srv.Requests()); n != 0 {
		t.Fatalf("%d requests sent with a bad schema", n)
	}
}
