// Package mcptest is a real MCP server built from the go-sdk, for tests of
// Cohort's MCP client: served over streamable HTTP in the test process
// (Handler) or run as a stdio process (Build compiles cmd/mcptestserver).
//
// Its tools: echo {text} answers "echo: <text>"; pid answers the server
// process's id (so a test can tell a restarted server from the first);
// crash exits the process with status 3 in the middle of the call; sleep
// blocks until the call is cancelled; bad_schema has an input schema no
// model API accepts (a property of type "bogus"). One resource,
// test://greeting, reads "hello from the test server".
package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// NewServer returns the test server; onCrash runs in place of exiting the
// process when the crash tool is called (nil: os.Exit(3)).
func NewServer(onCrash func()) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "cohort-test", Version: "1.0.0"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", Description: "Echoes its text back.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true},
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Text string }
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			return text("echo: " + in.Text), nil
		})
	s.AddTool(&mcp.Tool{Name: "pid", Description: "Answers the server's process id.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(fmt.Sprint(os.Getpid())), nil
		})
	s.AddTool(&mcp.Tool{Name: "crash", Description: "Exits the server mid-call.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if onCrash != nil {
				onCrash()
				return text("crashed"), nil
			}
			os.Exit(3)
			return nil, nil
		})
	s.AddTool(&mcp.Tool{Name: "sleep", Description: "Blocks until cancelled.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
	s.AddTool(&mcp.Tool{Name: "bad_schema", Description: "Has a broken schema.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"bogus"}}}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return text("never"), nil })
	s.AddResource(&mcp.Resource{URI: "test://greeting", Name: "greeting", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "hello from the test server"}}}, nil
		})
	return s
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// Handler serves the test server over streamable HTTP. With header set,
// requests without the header (name: value) are refused with 401.
func Handler(name, value string) http.Handler {
	srv := NewServer(func() {})
	// Stateless: no server-side session outlives a request, so nothing
	// of the test server keeps running once the test is over.
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if name != "" && r.Header.Get(name) != value {
			http.Error(w, "missing "+name, http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Build compiles the stdio test server into dir and returns its path.
func Build(dir string) (string, error) {
	bin := filepath.Join(dir, "mcptestserver")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/cohort-dev/cohort/internal/mcptest/cmd/mcptestserver")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the MCP test server: %v\n%s", err, out)
	}
	return bin, nil
}
