package relay

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

var offered = []fakeapi.Tool{
	{Name: "Bash", InputSchema: json.RawMessage(`{"type":"object","properties":{"command":{},"description":{}},"required":["command"],"additionalProperties":false}`)},
	{Name: "Write", InputSchema: json.RawMessage(`{"type":"object","required":["file_path","content"]}`)},
}

func TestParseAnswer(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []fakeapi.Block
	}{
		{"text only", "  All done.\n\nThe tests pass.\n", []fakeapi.Block{fakeapi.TextBlock("All done.\n\nThe tests pass.")}},
		{"text, call, text", "First.\n```tool Bash\ncommand: ls\n```\nThen.\r\n",
			[]fakeapi.Block{fakeapi.TextBlock("First."), fakeapi.ToolUseBlock("", "Bash", json.RawMessage(`{"command":"ls"}`)), fakeapi.TextBlock("Then.")}},
		{"two calls, JSON input, no text", "```tool Bash\n{\"command\": \"a\"}\n```\n```tool Bash\ncommand: b\n```",
			[]fakeapi.Block{fakeapi.ToolUseBlock("", "Bash", json.RawMessage(`{"command":"a"}`)), fakeapi.ToolUseBlock("", "Bash", json.RawMessage(`{"command":"b"}`))}},
		{"a plain fence stays text, even holding a tool fence", "See:\n```markdown\n```tool Bash\n```\nok",
			[]fakeapi.Block{fakeapi.TextBlock("See:\n```markdown\n```tool Bash\n```\nok")}},
		{"a longer fence holds backticks", "````tool Write\nfile_path: /a.md\ncontent: |\n  ```go\n  x\n  ```\n````\n",
			[]fakeapi.Block{fakeapi.ToolUseBlock("", "Write", json.RawMessage("{\"file_path\":\"/a.md\",\"content\":\"```go\\nx\\n```\\n\"}"))}},
		{"thinking", "```thinking\nThe user wants ls.\n```\n```tool Bash\ncommand: ls\n```",
			[]fakeapi.Block{fakeapi.ThinkingBlock("The user wants ls.", ""), fakeapi.ToolUseBlock("", "Bash", json.RawMessage(`{"command":"ls"}`))}},
		{"unchecked call", "```tool! Nope\nanything: 1\n```", []fakeapi.Block{fakeapi.ToolUseBlock("", "Nope", json.RawMessage(`{"anything":1}`))}},
	} {
		got, err := ParseAnswer("a.md", []byte(tc.in), offered)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if d := cmp.Diff(tc.want, got, cmp.AllowUnexported(fakeapi.Block{})); d != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, d)
		}
	}
}

func TestParseAnswerErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "\n  \n", "a.md: the answer is empty"},
		{"unclosed", "Hi.\n\n```tool Bash\ncommand: ls\n", "a.md:3: the ```tool Bash block opened here is not closed; end it with a line of ```"},
		{"no name", "```tool\n```", "a.md:1: write the tool's name after `tool`"},
		{"not offered", "```tool Edit\nx: 1\n```", `a.md:1: tool "Edit" is not offered in this request (offered: Bash, Write); to call it anyway, open the block with ` + "```tool! Edit"},
		{"missing and unknown fields", "```tool Bash\ncmd: ls\n```", "a.md:1: tool Bash: missing required field command; unknown field cmd (the schema has command, description)"},
		{"bad YAML, its line", "x\n```tool Bash\ncommand: [ls\n```", "a.md:3: the input is not valid YAML or JSON"},
		{"not a mapping", "```tool Bash\n- ls\n```", "a.md:2: the input must be a mapping"},
		{"empty thinking", "```thinking\n```", "a.md:1: the thinking block is empty"},
	} {
		_, err := ParseAnswer("a.md", []byte(tc.in), offered)
		var ae *AnswerError
		var se *fakeapi.ScriptError
		if err == nil || !(errors.As(err, &ae) || errors.As(err, &se)) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: error %v; want one starting %q", tc.name, err, tc.want)
		}
	}
}
