package mcp

import (
	"context"
	"encoding/json"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cohort-dev/cohort/tool"
)

// The resource tools' names, as Claude Code names them.
const (
	ListResourcesName = "ListMcpResourcesTool"
	ReadResourceName  = "ReadMcpResourceTool"
)

// offersResources reports whether the server said it has resources.
func (s *Server) offersResources() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resource && s.state != StateDisabled && s.cur != nil
}

type listInput struct {
	Server string `json:"server"`
}

type readInput struct {
	Server string `json:"server"`
	URI    string `json:"uri"`
}

// listed is one resource as ListMcpResourcesTool reports it.
type listed struct {
	URI         string `json:"uri"`
	Name        string `json:"name"`
	MIMEType    string `json:"mimeType,omitempty"`
	Description string `json:"description,omitempty"`
	Server      string `json:"server"`
}

// ResourceTools returns ListMcpResourcesTool and ReadMcpResourceTool over
// the servers of set. Both are read-only.
func ResourceTools(set *Set) []tool.Tool {
	list := tool.New(tool.Spec[listInput]{
		Name: ListResourcesName,
		Description: "Lists the resources (files, records, documents) that the connected MCP servers offer, " +
			"with the URI to read each one by. Give server to list one server's resources only.",
		Input:  tool.Object(tool.Optional("server", tool.String("Only this MCP server's resources."))),
		Traits: tool.Traits{ReadOnly: true, ConcurrencySafe: true},
		Run: func(ctx context.Context, _ *tool.Env, in listInput) (tool.Result, error) {
			return listResources(ctx, set, in.Server)
		},
	})
	read := tool.New(tool.Spec[readInput]{
		Name:        ReadResourceName,
		Description: "Reads one resource of an MCP server by its URI (see ListMcpResourcesTool).",
		Input: tool.Object(tool.Required("server", tool.String("The MCP server that has the resource.")),
			tool.Required("uri", tool.String("The resource's URI."))),
		Traits: tool.Traits{ReadOnly: true, ConcurrencySafe: true},
		Run: func(ctx context.Context, _ *tool.Env, in readInput) (tool.Result, error) {
			return readResource(ctx, set, in)
		},
	})
	return []tool.Tool{list, read}
}

func listResources(ctx context.Context, set *Set, only string) (tool.Result, error) {
	if only != "" {
		if _, ok := set.Lookup(only); !ok {
			return tool.Result{}, tool.Failf("no MCP server is called %q; the servers are %v", only, names(set))
		}
	}
	out := []listed{}
	for _, s := range set.Servers() {
		if only != "" && s.spec.Name != only || !s.offersResources() {
			continue
		}
		l, err := s.session(ctx)
		if err != nil {
			return tool.Result{}, tool.Failf("%v", err)
		}
		for r, err := range l.cs.Resources(ctx, nil) {
			if err != nil {
				return tool.Result{}, tool.Failf("MCP server %q: resources/list: %v", s.spec.Name, err)
			}
			out = append(out, listed{URI: r.URI, Name: r.Name, MIMEType: r.MIMEType, Description: r.Description, Server: s.spec.Name})
		}
	}
	data, _ := json.MarshalIndent(out, "", "  ")
	return tool.Text(string(data)), nil
}

func readResource(ctx context.Context, set *Set, in readInput) (tool.Result, error) {
	s, ok := set.Lookup(in.Server)
	if !ok {
		return tool.Result{}, tool.Failf("no MCP server is called %q; the servers are %v", in.Server, names(set))
	}
	l, err := s.session(ctx)
	if err != nil {
		return tool.Result{}, tool.Failf("%v", err)
	}
	res, err := l.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: in.URI})
	if err != nil {
		return tool.Result{}, tool.Failf("MCP server %q: reading %s: %v", in.Server, in.URI, s.broke(ctx, l, err))
	}
	type content struct {
		URI      string `json:"uri"`
		MIMEType string `json:"mimeType,omitempty"`
		Text     string `json:"text,omitempty"`
		Note     string `json:"note,omitempty"`
	}
	out := struct {
		Contents []content `json:"contents"`
	}{Contents: []content{}}
	for _, c := range res.Contents {
		e := content{URI: c.URI, MIMEType: c.MIMEType, Text: c.Text}
		if c.Blob != nil {
			e.Note = fmt.Sprintf("%d bytes of binary data, not shown", len(c.Blob))
		}
		out.Contents = append(out.Contents, e)
	}
	data, _ := json.MarshalIndent(out, "", "  ")
	return tool.Text(string(data)), nil
}

func names(set *Set) []string {
	var out []string
	for _, s := range set.Servers() {
		out = append(out, s.spec.Name)
	}
	return out
}
