package crew

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/tool"
)

// mcpTool stands for a tool of an MCP server: a name mcp__SERVER__NAME, a
// description of size bytes, and a run that records its calls.
type mcpTool struct {
	def   llm.ToolDef
	mu    sync.Mutex
	calls int
}

func newMCPTool(server, name string, size int) *mcpTool {
	desc := "Looks up " + name + " in the " + server + " server. "
	desc += strings.Repeat("x", max(0, size-len(desc)))
	return &mcpTool{def: llm.ToolDef{Name: "mcp__" + server + "__" + name, Description: desc,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`)}}
}

func (t *mcpTool) Def() llm.ToolDef                   { return t.def }
func (t *mcpTool) Traits(json.RawMessage) tool.Traits { return tool.Traits{ReadOnly: true} }
func (t *mcpTool) Run(context.Context, *tool.Env, json.RawMessage) (tool.Result, error) {
	t.mu.Lock()
	t.calls++
	t.mu.Unlock()
	return tool.Result{Content: []llm.Block{llm.Text("found it")}}, nil
}

func mcpServer(server string, n, size int) ([]tool.Tool, []*mcpTool) {
	var ts []tool.Tool
	var ms []*mcpTool
	for i := range n {
		m := newMCPTool(server, fmt.Sprintf("lookup_%02d", i), size)
		ts, ms = append(ts, m), append(ms, m)
	}
	return ts, ms
}

// TestManyMCPToolsWaitForToolSearch: MCP tools whose definitions together
// pass a tenth of the context window (agentdef.MCPOnDemand) are offered on
// demand: every request lists them with defer_loading, ToolSearch's
// description names them, and the model loads one and calls it. The lead's
// first request is golden, with the filler of the long descriptions cut to
// its length. A server under the threshold keeps its definitions whole.
func TestManyMCPToolsWaitForToolSearch(t *testing.T) {
	extra, tools := mcpServer("docs", 40, 2500) // 100 KB of definitions
	const want = "mcp__docs__lookup_07"
	s := &script{}
	s.on(firstUserAt("find the page", 0), reply(call("ToolSearch", map[string]any{"query": "select:" + want})))
	s.on(firstUserAt("find the page", 1), func(r *fakeapi.Request) fakeapi.Reply {
		if !r.Loaded(want) {
			return fakeapi.TextReply("not loaded")
		}
		return fakeapi.Reply{Content: []fakeapi.Block{call(want, map[string]any{"query": "install"})}}
	})
	s.on(firstUserAt("find the page", 2), say("done"))
	r := newRig(t, rigConfig{policy: s.policy, extra: extra})
	if got := r.send("find the page").Text; got != "done" {
		t.Fatalf("lead ended with %q, want done (the deferred tool was not loaded and called)", got)
	}
	tools[7].mu.Lock()
	calls := tools[7].calls
	tools[7].mu.Unlock()
	if calls != 1 {
		t.Fatalf("%s ran %d times, want 1", want, calls)
	}
	var first *fakeapi.Recorded
	for _, rec := range r.srv.Requests() {
		if rec.Request == nil {
			continue
		}
		for _, tl := range rec.Request.Tools {
			if strings.HasPrefix(tl.Name, "mcp__") && !tl.DeferLoading {
				t.Fatalf("request %d sends %s whole", rec.Request.Turn(), tl.Name)
			}
		}
		if rec.Request.Turn() == 0 && first == nil {
			first = &rec
		}
	}
	if first == nil {
		t.Fatal("no first request")
	}
	var search string
	for _, tl := range first.Request.Tools {
		if tl.Name == "ToolSearch" {
			search = tl.Description
		}
	}
	for _, m := range tools {
		if !strings.Contains(search, m.def.Name) {
			t.Fatalf("ToolSearch's description does not list %s:\n%s", m.def.Name, search)
		}
	}
	checkGolden(t, "mcp_deferred_request.golden",
		prettyJSON(t, bytes.ReplaceAll(first.Body, []byte(strings.Repeat("x", 2400)), []byte("<2400 x>"))), "the lead's request")
}

// TestFewMCPToolsStayLoaded: under the threshold, MCP tools are sent whole
// like the built-in ones, and no request needs ToolSearch for them.
func TestFewMCPToolsStayLoaded(t *testing.T) {
	extra, _ := mcpServer("small", 3, 400)
	s := &script{}
	s.on(firstUserAt("hello", 0), say("done"))
	r := newRig(t, rigConfig{policy: s.policy, extra: extra})
	r.send("hello")
	reqs := r.srv.Requests()
	if len(reqs) == 0 || reqs[0].Request == nil {
		t.Fatal("no request")
	}
	n := 0
	for _, tl := range reqs[0].Request.Tools {
		if strings.HasPrefix(tl.Name, "mcp__") {
			n++
			if tl.DeferLoading {
				t.Errorf("%s is deferred under the threshold", tl.Name)
			}
		}
	}
	if n != 3 {
		t.Fatalf("the request has %d MCP tools, want 3", n)
	}
}
