package mcp

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/internal/mcptest"
	"github.com/cohort-dev/cohort/internal/npmtest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// everythingSpec is the pinned MCP reference server.
const everythingSpec = "@modelcontextprotocol/server-everything@2026.1.26"

var (
	mcpBinOnce sync.Once
	mcpBin     string
	mcpBinErr  error
	mcpBinDir  string
)

// mcpServer returns the go-sdk test server (internal/mcptest), built once
// for the test binary.
func mcpServer(t *testing.T) string {
	t.Helper()
	mcpBinOnce.Do(func() {
		if mcpBinDir, mcpBinErr = os.MkdirTemp("", "cohort-mcptest"); mcpBinErr == nil {
			mcpBin, mcpBinErr = mcptest.Build(mcpBinDir)
		}
	})
	if mcpBinErr != nil {
		t.Fatal(mcpBinErr)
	}
	return mcpBin
}

func cleanupMCPServer() {
	if mcpBinDir != "" {
		os.RemoveAll(mcpBinDir)
	}
}

// results records the tool results a scripted model received, by label.
type results struct {
	mu  sync.Mutex
	got map[string]string
}

func (rs *results) record(label string, next func(*fakeapi.Request) fakeapi.Reply) func(*fakeapi.Request) fakeapi.Reply {
	return func(r *fakeapi.Request) fakeapi.Reply {
		rs.mu.Lock()
		if rs.got == nil {
			rs.got = map[string]string{}
		}
		rs.got[label] = strings.Join(clitest.ToolResults(r), "\n")
		rs.mu.Unlock()
		return next(r)
	}
}

func (rs *results) of(label string) string {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.got[label]
}

func mcpConfig(name, command string, args ...string) string {
	q := func(s string) string { return `"` + s + `"` }
	var as []string
	for _, a := range args {
		as = append(as, q(a))
	}
	return `{"mcpServers": {` + q(name) + `: {"command": ` + q(command) + `, "args": [` + strings.Join(as, ",") + `]}}}`
}

// TestMCPToolsFromLeadAndSubagent: a go-sdk server process given with
// --mcp-config is listed in system/init, its tool is called by the lead
// and by a subagent (MCP tools pass the subagent's type filters), and the
// answers reach the model.
func TestMCPToolsFromLeadAndSubagent(t *testing.T) {
	t.Parallel()
	bin := mcpServer(t)
	c, rs := clitest.NewConv(), &results{}
	h := clitest.New(t, c.Policy)
	c.On("use the server",
		clitest.Calls(clitest.Use("mcp__t__echo", map[string]any{"text": "from lead"})),
		rs.record("lead", clitest.Calls(clitest.Use("Agent", map[string]any{"description": "echo in sub", "prompt": "sub: echo it", "subagent_type": "general-purpose"}))),
		rs.record("agent", clitest.Text("all done")))
	c.On("sub: echo it",
		clitest.Calls(clitest.Use("mcp__t__echo", map[string]any{"text": "from sub"})),
		rs.record("sub", clitest.Text("sub done")))
	out, errOut, code := h.Run("-p", "use the server", "--mcp-config", mcpConfig("t", bin), "--allowedTools", "mcp__t",
		"--output-format", "stream-json", "--verbose")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, `"mcp_servers":[{"name":"t","status":"connected"}]`) || !strings.Contains(out, `"mcp__t__echo"`) {
		t.Errorf("system/init lacks the server or its tool:\n%s", initLine(out))
	}
	if got := rs.of("lead"); got != "echo: from lead" {
		t.Errorf("lead's result = %q", got)
	}
	if got := rs.of("sub"); got != "echo: from sub" {
		t.Errorf("subagent's result = %q", got)
	}
	if !strings.Contains(errOut, `tool "bad_schema" skipped`) {
		t.Errorf("stderr lacks the skipped tool's warning:\n%s", errOut)
	}
}

// TestMCPDenyRule: a deny rule on one tool wins over an allow rule on its
// server; the model reads the refusal.
func TestMCPDenyRule(t *testing.T) {
	t.Parallel()
	bin := mcpServer(t)
	c, rs := clitest.NewConv(), &results{}
	h := clitest.New(t, c.Policy)
	c.On("try echo", clitest.Calls(clitest.Use("mcp__t__echo", map[string]any{"text": "x"})), rs.record("lead", clitest.Text("ok")))
	_, errOut, code := h.Run("-p", "try echo", "--mcp-config", mcpConfig("t", bin), "--allowedTools", "mcp__t",
		"--disallowedTools", "mcp__t__echo")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got := rs.of("lead"); !strings.HasPrefix(got, "ERROR:") || strings.Contains(got, "echo: x") {
		t.Errorf("denied call's result = %q; want an error, and the server never reached", got)
	}
}

// TestMCPCrashReported: a server that exits mid-call is reported on stderr
// and restarted; the model reads what happened and the next call works.
func TestMCPCrashReported(t *testing.T) {
	t.Parallel()
	bin := mcpServer(t)
	c, rs := clitest.NewConv(), &results{}
	h := clitest.New(t, c.Policy)
	c.On("crash it", clitest.Calls(clitest.Use("mcp__t__crash", map[string]any{})),
		rs.record("crash", clitest.Calls(clitest.Use("mcp__t__echo", map[string]any{"text": "again"}))),
		rs.record("after", clitest.Text("ok")))
	_, errOut, code := h.Run("-p", "crash it", "--mcp-config", mcpConfig("t", bin), "--allowedTools", "mcp__t")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got := rs.of("crash"); !strings.Contains(got, "exited during the call") {
		t.Errorf("crash result = %q", got)
	}
	if got := rs.of("after"); got != "echo: again" {
		t.Errorf("after the restart = %q", got)
	}
	if !strings.Contains(errOut, `MCP server "t" exited (exit code 3); restarting it once`) {
		t.Errorf("stderr = %s", errOut)
	}
}

// TestMCPSilentServer: a server that never answers times out at start-up
// with a clear message, and the run goes on without its tools.
func TestMCPSilentServer(t *testing.T) {
	t.Parallel()
	bin := mcpServer(t)
	h := clitest.New(t, func(r *fakeapi.Request) fakeapi.Reply {
		if r.HasTool("mcp__t__echo") {
			return fakeapi.TextReply("has the tool")
		}
		return fakeapi.TextReply("ran without it")
	})
	h.Vars["MCP_TIMEOUT"] = "400"
	out, errOut, code := h.Run("-p", "x", "--mcp-config", mcpConfig("t", bin, "-silent"))
	if code != 0 || strings.TrimSpace(out) != "ran without it" {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	if !strings.Contains(errOut, `MCP server "t" did not answer initialize within 400ms`) {
		t.Errorf("stderr = %s", errOut)
	}
}

// TestMCPProjectApproval: a .mcp.json server is reported and not started
// until `cohort mcp approve` records the approval; `cohort mcp list` shows
// the state and tools.
func TestMCPProjectApproval(t *testing.T) {
	t.Parallel()
	bin := mcpServer(t)
	h := clitest.New(t, func(*fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("ran") })
	h.Write(".mcp.json", mcpConfig("proj", bin))
	out, errOut, code := h.Run("-p", "x", "--output-format", "stream-json", "--verbose")
	if code != 0 || !strings.Contains(out, `"mcp_servers":[{"name":"proj","status":"disabled"}]`) {
		t.Fatalf("exit %d: %s", code, initLine(out))
	}
	if !strings.Contains(errOut, "cohort mcp approve proj") {
		t.Errorf("stderr does not say how to approve: %s", errOut)
	}
	if out, errOut, code = h.Run("mcp", "approve", "proj"); code != 0 || !strings.Contains(out, "settings.local.json") {
		t.Fatalf("approve: exit %d: %s %s", code, out, errOut)
	}
	out, errOut, code = h.Run("mcp", "list")
	if code != 0 || !strings.Contains(out, "proj: connected (project") || !strings.Contains(out, "  mcp__proj__echo") {
		t.Fatalf("list: exit %d:\n%s\n%s", code, out, errOut)
	}
	// Issue 36, escape 7: the approval is for what the server runs; a
	// rewritten .mcp.json (here the same name, another program) starts
	// nothing until approved again.
	canary := filepath.Join(filepath.Dir(h.Dir), "mcp-canary")
	h.Write(".mcp.json", `{"mcpServers": {"proj": {"command": "touch", "args": ["`+canary+`"]}}}`)
	out, errOut, code = h.Run("-p", "x", "--output-format", "stream-json", "--verbose")
	if code != 0 || !strings.Contains(out, `"mcp_servers":[{"name":"proj","status":"disabled"}]`) {
		t.Fatalf("after the rewrite: exit %d: %s", code, initLine(out))
	}
	if !strings.Contains(errOut, "definition changed") || !strings.Contains(errOut, "touch "+canary) || !strings.Contains(errOut, "cohort mcp approve proj") {
		t.Errorf("stderr does not say the definition changed and how to approve it: %s", errOut)
	}
	if _, err := os.Stat(canary); err == nil {
		t.Errorf("the rewritten server ran")
	}
	// An .mcp.json that does not parse is named, and nothing runs.
	h.Write(".mcp.json", "{\"mcpServers\": {\"proj\": {\"command\": \"touch\", \"args\": [\""+canary+"\"],}}}")
	_, errOut, code = h.Run("-p", "x")
	if code != 0 || !strings.Contains(errOut, filepath.Join(h.Dir, ".mcp.json")+":1") || !strings.Contains(errOut, "none of the MCP servers it names is started") {
		t.Errorf("a broken .mcp.json: exit %d, stderr %s", code, errOut)
	}
	if _, err := os.Stat(canary); err == nil {
		t.Errorf("a server of the broken file ran")
	}
}

// TestMCPAgentOwnServer: an agent definition's inline mcpServers is its own
// connection; its tools reach it past its tools list.
func TestMCPAgentOwnServer(t *testing.T) {
	t.Parallel()
	bin := mcpServer(t)
	c, rs := clitest.NewConv(), &results{}
	h := clitest.New(t, c.Policy)
	h.Write(".cohort/agents/echoer.md", "---\nname: echoer\ndescription: echoes\ntools: Read\nmcpServers:\n  own:\n    command: "+bin+"\n---\nYou echo.")
	c.On("delegate", clitest.Calls(clitest.Use("Agent", map[string]any{"description": "echo", "prompt": "own: echo", "subagent_type": "echoer"})), clitest.Text("done"))
	c.On("own: echo", clitest.Calls(clitest.Use("mcp__own__echo", map[string]any{"text": "mine"})), rs.record("sub", clitest.Text("sub done")))
	_, errOut, code := h.Run("-p", "delegate", "--permission-mode", "bypassPermissions")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got := rs.of("sub"); got != "echo: mine" {
		t.Errorf("the agent's own server answered %q", got)
	}
}

// TestMCPServerEverything: the MCP reference server from npm, its echo
// tool called through --mcp-config.
func TestMCPServerEverything(t *testing.T) {
	t.Parallel()
	dir := npmtest.Install(t, everythingSpec)
	node := npmtest.Node(t)
	script := filepath.Join(dir, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	c, rs := clitest.NewConv(), &results{}
	h := clitest.New(t, c.Policy)
	c.On("echo via everything", clitest.Calls(clitest.Use("mcp__everything__echo", map[string]any{"message": "hello reference"})), rs.record("lead", clitest.Text("ok")))
	_, errOut, code := h.Run("-p", "echo via everything", "--mcp-config", mcpConfig("everything", node, script, "stdio"),
		"--allowedTools", "mcp__everything__echo")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got := rs.of("lead"); !strings.Contains(got, "hello reference") || strings.HasPrefix(got, "ERROR:") {
		t.Errorf("echo = %q\nstderr: %s", got, errOut)
	}
}

func initLine(s string) string { line, _, _ := strings.Cut(s, "\n"); return line }

// TestMCPHTTPServer: a streamable HTTP server with a header from
// --mcp-config; its tool is called by the lead and refused by a rule.
func TestMCPHTTPServer(t *testing.T) {
	t.Parallel()
	hs := httptest.NewServer(mcptest.Handler("X-Key", "k1"))
	defer hs.Close()
	c, rs := clitest.NewConv(), &results{}
	h := clitest.New(t, c.Policy)
	c.On("over http", clitest.Calls(clitest.Use("mcp__web__echo", map[string]any{"text": "via http"})),
		rs.record("echo", clitest.Calls(clitest.Use("mcp__web__pid", map[string]any{}))), rs.record("pid", clitest.Text("ok")))
	cfg := `{"mcpServers": {"web": {"type": "http", "url": "` + hs.URL + `", "headers": {"X-Key": "${WEB_KEY}"}}}}`
	h.Vars["WEB_KEY"] = "k1"
	_, errOut, code := h.Run("-p", "over http", "--mcp-config", cfg, "--allowedTools", "mcp__web", "--disallowedTools", "mcp__web__pid")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if got := rs.of("echo"); got != "echo: via http" {
		t.Errorf("echo = %q\n%s", got, errOut)
	}
	if got := rs.of("pid"); !strings.HasPrefix(got, "ERROR:") {
		t.Errorf("denied pid = %q", got)
	}
}
