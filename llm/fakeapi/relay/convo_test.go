package relay

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// play is a relay driven without a server: requests are registered and
// answered directly.
type play struct {
	t *testing.T
	r *Relay
}

func newPlay(t *testing.T) *play {
	r, err := New(Config{Dir: filepath.Join(t.TempDir(), "relay")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return &play{t, r}
}

// ask registers a request and returns its entry and view.
func (p *play) ask(system string, tools []fakeapi.Tool, msgs ...fakeapi.Message) (*entry, string) {
	p.t.Helper()
	req := &fakeapi.Request{Model: "m", MaxTokens: 100, Tools: tools, Messages: msgs}
	if system != "" {
		req.System = []fakeapi.Block{fakeapi.TextBlock(system)}
	}
	e, err := p.r.register(req)
	if err != nil {
		p.t.Fatal(err)
	}
	view, err := os.ReadFile(p.r.path(e.n, "request.md"))
	if err != nil {
		p.t.Fatal(err)
	}
	return e, string(view)
}

// answer answers e and returns the assistant message a client would keep.
func (p *play) answer(e *entry, text string) fakeapi.Message {
	p.t.Helper()
	if err := os.WriteFile(filepath.Join(p.r.cfg.Dir, answerName(e.n)), []byte(text), 0o644); err != nil {
		p.t.Fatal(err)
	}
	reply, ok := p.r.check(e)
	if !ok {
		st, _ := ReadStatus(p.r.cfg.Dir, e.n)
		p.t.Fatalf("answer to %d not taken: %+v", e.n, st)
	}
	for i := range reply.Content {
		if reply.Content[i].Type == "tool_use" {
			reply.Content[i].ID = fmt.Sprintf("toolu_%d_%d", e.n, i) // as the server makes one
		}
	}
	return fakeapi.Message{Role: "assistant", Content: reply.Content}
}

func user(text string) fakeapi.Message {
	return fakeapi.Message{Role: "user", Content: []fakeapi.Block{fakeapi.TextBlock(text)}}
}

func tool(name, desc string) fakeapi.Tool {
	return fakeapi.Tool{Name: name, Description: desc, InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func mustContain(t *testing.T, what, view string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(view, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, view)
		}
	}
}

func mustLack(t *testing.T, what, view string, unwanted ...string) {
	t.Helper()
	for _, w := range unwanted {
		if strings.Contains(view, w) {
			t.Errorf("%s holds %q:\n%s", what, w, view)
		}
	}
}

const spawnTwo = "Starting.\n```tool Agent\ndescription: count a\nprompt: Count the a files.\nsubagent_type: general-purpose\n```\n" +
	"```tool Agent\ndescription: count b\nprompt: Count the b files.\n```\n"

// Agents are told apart and named, each tool definition is shown once,
// and later tool arrays are described by how they differ.
func TestConversationsAndTools(t *testing.T) {
	p := newPlay(t)
	leadTools := []fakeapi.Tool{tool("Agent", "Start an agent."), tool("Bash", "Run a command.")}
	subTools := []fakeapi.Tool{tool("Bash", "Run a command."), tool("Read", "Read a file.")}

	lead, view := p.ask("LEAD PROMPT", leadTools, user("Count everything."))
	mustContain(t, "the lead's view", view, "# Request 1: lead, turn 0", "LEAD PROMPT", "2 tools: Agent, Bash.", "### Agent", "### Bash")
	leadMsg := p.answer(lead, spawnTwo)

	a, view := p.ask("SUB PROMPT", subTools, user("Count the a files."))
	mustContain(t, "agent a's view", view, "# Request 2: agent-2, turn 0", "SUB PROMPT",
		`Started by lead's tool call in request 1: description "count a", subagent_type general-purpose.`,
		"2 tools: lead's, without Agent; with Read added.", "### Read")
	mustLack(t, "agent a's view", view, "### Bash")
	b, view := p.ask("SUB PROMPT", subTools, user("Count the b files."))
	mustContain(t, "agent b's view", view, "agent-3", "The same as agent-2's (request 2).", "The same 2 tools as agent-2.", `description "count b"`)
	mustLack(t, "agent b's view", view, "SUB PROMPT", "### Read")

	// b answers first; then each continues and sees only its news.
	bMsg := p.answer(b, "```tool Bash\ncommand: ls b\n```")
	aMsg := p.answer(a, "```tool Bash\ncommand: ls a\n```")
	result := func(m fakeapi.Message, out string) fakeapi.Message {
		return fakeapi.Message{Role: "user", Content: []fakeapi.Block{{Type: "tool_result", ToolUseID: m.Content[0].ID,
			Content: []fakeapi.Block{fakeapi.TextBlock(out)}}}}
	}
	a2, view := p.ask("SUB PROMPT", subTools, user("Count the a files."), aMsg, result(aMsg, "a1 a2"))
	mustContain(t, "a's second view", view, "agent-2 continues after your answer to request 2.", "a1 a2")
	mustLack(t, "a's second view", view, "## Tools", "## System prompt", "Count the a files.")
	if a2.conv.label != "agent-2" {
		t.Fatalf("a's second request went to %s", a2.conv.label)
	}
	b2, _ := p.ask("SUB PROMPT", append(subTools, tool("Grep", "Search.")), user("Count the b files."), bMsg, result(bMsg, "b1"))
	view = readFile(t, p.r.path(b2.n, "request.md"))
	mustContain(t, "b's second view", view, "agent-3 continues", "3 tools: its last request's, with Grep added.", "### Grep", "b1")

	// The lead's next request holds both results.
	results := fakeapi.Message{Role: "user", Content: []fakeapi.Block{
		{Type: "tool_result", ToolUseID: leadMsg.Content[1].ID, Content: []fakeapi.Block{fakeapi.TextBlock("a: 2\n\n<agent-result agentId=\"a1b2\" tool_uses=\"1\" />")}},
		{Type: "tool_result", ToolUseID: leadMsg.Content[2].ID, Content: []fakeapi.Block{fakeapi.TextBlock("b: 1")}},
	}}
	_, view = p.ask("LEAD PROMPT", leadTools, user("Count everything."), leadMsg, results)
	mustContain(t, "the lead's second view", view, "lead continues after your answer to request 1.", "**tool result** for Agent", "a: 2", "b: 1")
	mustLack(t, "the lead's second view", view, "LEAD PROMPT", "Count everything.")
	// The result named agent a's id: the index shows it beside the label.
	mustContain(t, "the index", readFile(t, filepath.Join(p.r.cfg.Dir, indexFile)), "| agent-2 (a1b2) | 1 |", "| agent-3 | 1 |")
}

// Two agents started at once with the same prompt send identical first
// requests: the second is another agent, because the first is waiting.
func TestIdenticalAgentsAtOnce(t *testing.T) {
	p := newPlay(t)
	lead, _ := p.ask("L", nil, user("go"))
	p.answer(lead, "```tool! Agent\nprompt: Same job.\n```\n```tool! Agent\nprompt: Same job.\n```")
	first, _ := p.ask("S", nil, user("Same job."))
	second, view := p.ask("S", nil, user("Same job."))
	if first.conv == second.conv || second.conv.label != "agent-3" {
		t.Fatalf("identical agents: %s and %s", first.conv.label, second.conv.label)
	}
	mustContain(t, "the second view", view, "Started by lead's tool call in request 1", "The same system prompt and first message as agent-2, which is busy")
}

// A fork child carries its parent's history and is a new agent; a request
// that returns to an earlier point is shown from there.
func TestForkAndRewind(t *testing.T) {
	p := newPlay(t)
	lead, _ := p.ask("L", nil, user("go"))
	leadMsg := p.answer(lead, "```tool! Agent\nprompt: \"Fork directive: check the docs.\"\n```")
	call := leadMsg.Content[0].ID
	fork, view := p.ask("L", nil, user("go"), leadMsg, fakeapi.Message{Role: "user", Content: []fakeapi.Block{
		{Type: "tool_result", ToolUseID: call, Content: []fakeapi.Block{fakeapi.TextBlock("Forked.")}},
		fakeapi.TextBlock("Fork directive: check the docs.")}})
	if fork.conv.label != "agent-2" {
		t.Fatalf("the fork child is %s", fork.conv.label)
	}
	mustContain(t, "the fork's view", view, "A fork of lead: it carries lead's history up to request 1", "Fork directive")
	mustLack(t, "the fork's view", view, "**prompt**")

	// The lead goes on; then the client re-sends its first request (the
	// answer was lost): the lead is shown from the start again.
	next, _ := p.ask("L", nil, user("go"), leadMsg, fakeapi.Message{Role: "user", Content: []fakeapi.Block{
		{Type: "tool_result", ToolUseID: call, Content: []fakeapi.Block{fakeapi.TextBlock("done")}}}})
	if next.conv != lead.conv {
		t.Fatalf("the lead's next request went to %s", next.conv.label)
	}
	p.answer(next, "Done.")
	again, view := p.ask("L", nil, user("go"))
	if again.conv != lead.conv {
		t.Fatalf("the re-sent request went to %s", again.conv.label)
	}
	mustContain(t, "the re-sent view", view, "lead went back to its start: your answers from request 1 on did not reach it", "**prompt**")
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
