package fakeapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseScriptErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string
	}{
		{"empty", "", "s.yaml: the script is empty"},
		{"not a list", "hello", "s.yaml:1: the script must be a list of rules"},
		{"no rules", "[]", "s.yaml:1: the script has no rules"},
		{"bad yaml", "- name: a\n  reply: [\n", "s.yaml:2: invalid YAML"},
		{"unknown rule key", "- name: a\n  reply: hi\n  repyl: x\n", `s.yaml:3: rule 1: unknown key "repyl"`},
		{"unknown condition", "- match:\n    frist_user: x\n  reply: hi\n", `s.yaml:2: rule 1 match: unknown condition "frist_user"`},
		{"no reply", "- name: a\n  match: {turn: 1}\n", "s.yaml:1: rule 1 has neither a reply nor a fault"},
		{"bad regexp", "- match: {system_re: \"(\"}\n  reply: hi\n", "s.yaml:1: rule 1 match system_re is not a valid regular expression"},
		{"turn not a number", "- match: {turn: two}\n  reply: hi\n", `s.yaml:1: rule 1 match turn must be a whole number (got "two")`},
		{"negative turn", "- match: {turn: -1}\n  reply: hi\n", "must be 0 or more"},
		{"times zero", "- times: 0\n  reply: hi\n", "rule 1 times must be 1 or more"},
		{"two kinds in a block", "- reply:\n    - text: a\n      thinking: b\n", "s.yaml:2: rule 1 reply block 1 must have exactly one of"},
		{"unknown block", "- reply:\n    - image: x\n", `s.yaml:2: rule 1 reply block 1: unknown key "image"`},
		{"tool without name", "- reply:\n    - tool_use: {input: {a: 1}}\n", "s.yaml:2: rule 1 reply block 1 tool_use needs a name"},
		{"tool input not a map", "- reply:\n    - tool_use: {name: Bash, input: [1]}\n", "s.yaml:2: rule 1 reply block 1 tool_use input must be a mapping"},
		{"bad tool name", "- reply:\n    - tool_use: {name: \"a b\"}\n", "must match ^[a-zA-Z0-9_-]{1,128}$"},
		{"unknown fault", "- fault: {kind: meteor}\n", `s.yaml:1: rule 1 fault kind "meteor" is unknown`},
		{"fault without kind", "- fault: {message: x}\n", "rule 1 fault needs a kind"},
		{"bad status", "- fault: {kind: server_error, status: 200}\n", "status must be an HTTP error status"},
		{"negative after_blocks", "- fault: {kind: cut_connection, after_blocks: -1}\n", "rule 1 fault after_blocks must not be negative"},
		{"bad delay", "- reply: hi\n  first_token_delay: soon\n", `first_token_delay must be a duration such as 250ms or 2s (got "soon")`},
		{"unknown placeholder", "- reply: \"hi {{nmae}}\"\n", "s.yaml:1: unknown placeholder {{nmae}}"},
		{"unknown placeholder in input", "- reply:\n    - tool_use: {name: a, input: {x: \"{{bogus}}\"}}\n", "s.yaml:2: unknown placeholder {{bogus}}"},
		{"duplicate key", "- reply: a\n  reply: b\n", `s.yaml:2: rule 1: key "reply" appears twice`},
		{"signature on text", "- reply:\n    - {text: a, signature: s}\n", "signature belongs to a thinking block"},
		{"infinite number", "- reply:\n    - tool_use: {name: a, input: {x: .inf}}\n", "is not a finite number"},
		{"top-level mapping without rules", "other: 1\n", `s.yaml:1: unknown top-level key "other"`},
		{"self-referential input", "- reply:\n    - tool_use: {name: x, input: &x {a: [*x]}}\n", "nests deeper than 64 levels"},
		{"rule not a mapping", "- just text\n", "s.yaml:1: rule 1 must be a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseScript("s.yaml", []byte(tt.src))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want it to contain %q", err, tt.want)
			}
			var se *ScriptError
			if !errors.As(err, &se) || se.File != "s.yaml" {
				t.Errorf("error %T does not carry the file", err)
			}
		})
	}
}

func TestParseScriptForms(t *testing.T) {
	yamlSrc := "rules:\n  - name: r\n    match: {turn: 0}\n    reply:\n      - tool_use: {name: Bash, id: toolu_1, input: {command: ls, n: 3, f: 1.5, ok: true, none: null, list: [a, 2]}}\n"
	jsonSrc := "[\n\t{\"name\": \"r\", \"match\": {\"turn\": 0},\n\t \"reply\": [{\"tool_use\": {\"name\": \"Bash\", \"id\": \"toolu_1\",\n\t\t\"input\": {\"command\": \"ls\", \"n\": 3, \"f\": 1.5, \"ok\": true, \"none\": null, \"list\": [\"a\", 2]}}}]}\n]\n"
	var inputs []string
	for _, src := range []string{yamlSrc, jsonSrc} {
		sc, err := ParseScript("x", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		r := sc.Policy()(&Request{Messages: []Message{{Role: "user", Content: []Block{TextBlock("hi")}}}})
		if r.Label != "r" || len(r.Content) != 1 {
			t.Fatalf("reply %+v", r)
		}
		inputs = append(inputs, string(r.Content[0].Input))
	}
	want := `{"command":"ls","n":3,"f":1.5,"ok":true,"none":null,"list":["a",2]}` // key order kept
	if diff := cmp.Diff([]string{want, want}, inputs); diff != "" {
		t.Errorf("tool input (-want +got):\n%s", diff)
	}
}

func TestScriptMatching(t *testing.T) {
	src := `
- name: sys
  match: {system: "reviewer", turn: 0}
  reply: "review"
- name: once
  match: {first_user_re: "^count"}
  times: 1
  reply: "first"
- name: again
  match: {first_user_re: "^count"}
  reply: "later"
- name: tool-result
  match: {tool_result: "exit 1", model: "haiku"}
  reply: "failed: {{last_tool_result}}"
- name: offered
  match: {tool: "Agent", last_user: "delegate"}
  reply: "turn {{turn}} attempt {{attempt}} model {{model}}"
`
	sc, err := ParseScript("m.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	policy := sc.Policy()
	toolTurn := []Message{
		{Role: "user", Content: []Block{TextBlock("run it")}},
		{Role: "assistant", Content: []Block{{Type: "tool_use", ID: "t1", Name: "Bash", Input: json.RawMessage(`{}`)}}},
		{Role: "user", Content: []Block{{Type: "tool_result", ToolUseID: "t1", Content: []Block{TextBlock("exit 1")}}}},
	}
	tests := []struct {
		req  *Request
		want string // label: text
	}{
		{&Request{System: []Block{TextBlock("You are a reviewer.")}, Messages: []Message{{Role: "user", Content: []Block{TextBlock("x")}}}}, "sys: review"},
		{&Request{Messages: []Message{{Role: "user", Content: []Block{TextBlock("count 1")}}}}, "once: first"},
		{&Request{Messages: []Message{{Role: "user", Content: []Block{TextBlock("count 2")}}}}, "again: later"},
		{&Request{Model: "claude-haiku-4-5", Messages: toolTurn}, "tool-result: failed: exit 1"},
		{&Request{Model: "claude-opus", Messages: toolTurn}, ": "}, // model does not match: unmatched
		{&Request{Model: "m", Attempt: 2, Tools: []Tool{{Name: "Agent"}}, Messages: []Message{{Role: "user", Content: []Block{TextBlock("please delegate")}}}}, "offered: turn 0 attempt 2 model m"},
	}
	for i, tt := range tests {
		r := policy(tt.req)
		got := r.Label + ": " + joinText(r.Content)
		if got != tt.want {
			t.Errorf("request %d: got %q, want %q", i, got, tt.want)
		}
	}
}

func TestScriptUnmatchedIsRejected(t *testing.T) {
	sc, err := ParseScript("only.yaml", []byte("- match: {first_user: hello}\n  reply: hi\n"))
	if err != nil {
		t.Fatal(err)
	}
	srv := start(t, Config{Script: sc})
	res := call(t, httpClient(t), srv.URL, "/v1/messages", body(user("goodbye")))
	var e wireErrorBody
	json.Unmarshal(res.Body, &e)
	if res.Status != 400 || e.Error.Type != "invalid_request_error" ||
		!strings.Contains(e.Error.Message, "no rule in script only.yaml matched") || !strings.Contains(e.Error.Message, `"goodbye"`) {
		t.Errorf("%d %s", res.Status, res.Body)
	}
}

func TestScriptTemplateInToolInputStaysJSON(t *testing.T) {
	sc, err := ParseScript("t.yaml", []byte("- reply:\n    - tool_use: {name: Write, input: {content: \"echo: {{first_user}}\", n: 1}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	nasty := "quote \" backslash \\ newline \n brace {{turn}} 😀 </script>"
	r := sc.Policy()(&Request{Messages: []Message{{Role: "user", Content: []Block{TextBlock(nasty)}}}})
	var in struct {
		Content string `json:"content"`
		N       int    `json:"n"`
	}
	if err := json.Unmarshal(r.Content[0].Input, &in); err != nil {
		t.Fatalf("input %s: %v", r.Content[0].Input, err)
	}
	if in.Content != "echo: "+nasty || in.N != 1 {
		t.Errorf("input %+v", in)
	}
}

// TestDemoScript drives the example script's two conversations over HTTP,
// the way the engine would.
func TestDemoScript(t *testing.T) {
	sc, err := LoadScript("testdata/demo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	srv := start(t, Config{Script: sc})
	c := httpClient(t)
	tools := []any{schemaTool("Agent"), schemaTool("Glob")}
	send := func(msgs ...map[string]any) (decoded, int) {
		res := call(t, c, srv.URL, "/v1/messages", with(body(msgs...), "tools", tools))
		if res.Status != 200 {
			return decoded{}, res.Status
		}
		evs, err := readSSE(bytes.NewReader(res.Body))
		if err != nil {
			t.Fatal(err)
		}
		return decode(t, evs), 200
	}
	lead := user("Tour this repository, please.")
	if _, status := send(lead); status != 529 {
		t.Fatalf("first attempt: status %d, want the scripted 529", status)
	}
	d, _ := send(lead)
	agentID := d.Blocks[2]["id"].(string)
	var agentIn map[string]any
	json.Unmarshal([]byte(d.Text[2]), &agentIn)
	if d.StopReason != "tool_use" || d.Blocks[2]["name"] != "Agent" || agentIn["subagent_type"] != "Explore" {
		t.Fatalf("lead turn 0: %+v", d)
	}

	sub := user(agentIn["prompt"].(string))
	d, _ = send(sub)
	globID := d.Blocks[0]["id"].(string)
	subCall := assistant([]any{map[string]any{"type": "tool_use", "id": globID, "name": "Glob", "input": map[string]any{"pattern": "*"}}})
	d, _ = send(sub, subCall, user([]any{toolResult(globID, "README.md\ngo.mod")}))
	report := d.Text[0]
	if report != "Top-level entries:\nREADME.md\ngo.mod" || d.StopReason != "end_turn" {
		t.Fatalf("explorer report %q", report)
	}

	leadCall := assistant([]any{map[string]any{"type": "tool_use", "id": agentID, "name": "Agent", "input": agentIn}})
	d, _ = send(lead, leadCall, user([]any{toolResult(agentID, report)}))
	if want := "Here is what the Explore agent found (turn 1):\n" + report; d.Text[0] != want {
		t.Errorf("lead summary %q, want %q", d.Text[0], want)
	}
	d, _ = send(user("something else"))
	if !strings.Contains(d.Text[0], "scripted demo model") {
		t.Errorf("fallback %q", d.Text[0])
	}
	var labels []string
	for _, r := range srv.Requests() {
		labels = append(labels, r.Label)
	}
	want := []string{"first-call-overloaded", "lead-delegates", "explorer-looks", "explorer-reports", "lead-summarises", "fallback"}
	if diff := cmp.Diff(want, labels); diff != "" {
		t.Errorf("rules used (-want +got):\n%s", diff)
	}
}

// TestConcurrentConversations runs 50 two-turn conversations at once against
// one scripted server; each must get its own replies.
func TestConcurrentConversations(t *testing.T) {
	const n = 50
	var src strings.Builder
	for i := range n {
		fmt.Fprintf(&src, "- match: {first_user: \"task %03d\", turn: 0}\n  reply:\n    - text: \"starting %03d\"\n    - tool_use: {name: Bash, input: {command: \"echo %03d\"}}\n", i, i, i)
		fmt.Fprintf(&src, "- match: {first_user: \"task %03d\", turn: 1}\n  reply: \"finished %03d after {{last_tool_result}}\"\n", i, i)
	}
	sc, err := ParseScript("many.yaml", []byte(src.String()))
	if err != nil {
		t.Fatal(err)
	}
	srv := start(t, Config{Script: sc, Seed: 3})
	c := httpClient(t)
	tools := []any{schemaTool("Bash")}
	errs := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			first := user(fmt.Sprintf("task %03d", i))
			res := call(t, c, srv.URL, "/v1/messages", with(body(first), "tools", tools))
			evs, _ := readSSE(bytes.NewReader(res.Body))
			d := decode(t, evs)
			var in struct{ Command string }
			json.Unmarshal([]byte(d.Text[1]), &in)
			if d.Text[0] != fmt.Sprintf("starting %03d", i) || in.Command != fmt.Sprintf("echo %03d", i) {
				errs[i] = fmt.Sprintf("turn 0: %q %q", d.Text[0], d.Text[1])
				return
			}
			id := d.Blocks[1]["id"].(string)
			call0 := assistant([]any{text(d.Text[0]), map[string]any{"type": "tool_use", "id": id, "name": "Bash", "input": in}})
			res = call(t, c, srv.URL, "/v1/messages", with(body(first, call0, user([]any{toolResult(id, fmt.Sprintf("out %03d", i))})), "tools", tools))
			evs, _ = readSSE(bytes.NewReader(res.Body))
			if got, want := decode(t, evs).Text[0], fmt.Sprintf("finished %03d after out %03d", i, i); got != want {
				errs[i] = fmt.Sprintf("turn 1: %q, want %q", got, want)
			}
		})
	}
	wg.Wait()
	for i, e := range errs {
		if e != "" {
			t.Errorf("conversation %d: %s", i, e)
		}
	}
	if got := len(srv.Requests()); got != 2*n {
		t.Errorf("%d requests recorded, want %d", got, 2*n)
	}
}

// FuzzParseScript feeds arbitrary bytes to the parser: it must return a
// script or an error naming the file, never panic or hang, and a script it
// accepts must produce replies the server can send.
func FuzzParseScript(f *testing.F) {
	f.Add([]byte("- reply: hi\n"))
	f.Add([]byte("rules:\n  - match: {turn: 1, first_user_re: 'a+'}\n    reply:\n      - tool_use: {name: x, input: {a: [1, {b: c}]}}\n"))
	f.Add([]byte(`[{"reply": [{"thinking": "t", "signature": "s"}, {"text": "{{last_user}}"}], "fault": {"kind": "stream_error"}}]`))
	f.Add([]byte("- &a {reply: hi}\n- *a\n"))
	f.Add([]byte("- reply:\n    - tool_use: {name: x, input: &x {a: [*x]}}\n"))
	f.Add([]byte("a: &a [*a, *a]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := ParseScript("f.yaml", data)
		if err != nil {
			var se *ScriptError
			if !errors.As(err, &se) || se.File != "f.yaml" {
				t.Fatalf("error without the file: %v", err)
			}
			return
		}
		req := &Request{Model: "m", Messages: []Message{{Role: "user", Content: []Block{TextBlock("hello {{turn}} \"x\"")}}}}
		policy := sc.Policy()
		for range 2 {
			r := policy(req)
			if _, err := normalize(r, [32]byte{}); err != nil {
				t.Fatalf("accepted script produced an unusable reply: %v", err)
			}
		}
	})
}
