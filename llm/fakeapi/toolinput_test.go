package fakeapi

import (
	"errors"
	"strings"
	"testing"
)

func TestToolInput(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"yaml", "command: go test ./...\ndescription: Run {{the}} tests\n", `{"command":"go test ./...","description":"Run {{the}} tests"}`},
		{"block scalar", "prompt: |\n  line one\n  line two\ncount: 3\n", `{"prompt":"line one\nline two\n","count":3}`},
		{"json", `{"b": [1, true, null], "a": {"x": "y"}}`, `{"b":[1,true,null],"a":{"x":"y"}}`},
		{"empty", "\n", `{}`},
	} {
		got, err := ToolInput("a.md", 10, []byte(tc.in))
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: ToolInput = %s, %v; want %s", tc.name, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ name, in, want string }{
		{"list", "- a\n- b\n", "a.md:10: the input must be a mapping"},
		{"bad yaml", "command: go\n  bad: [\n", "a.md:11: the input is not valid YAML or JSON"},
		{"unquoted colon", "prompt: Fix it: now\n", "a.md:10: the input is not valid YAML or JSON: mapping values are not allowed in this context (a value that holds \": \" must be quoted"},
	} {
		_, err := ToolInput("a.md", 10, []byte(tc.in))
		var se *ScriptError
		if !errors.As(err, &se) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: error %v; want one starting %q", tc.name, err, tc.want)
		}
	}
}
