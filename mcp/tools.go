package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cohort-dev/cohort/internal/lazyre"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
)

// maxToolName is the longest tool name the Messages API takes.
const maxToolName = 64

var unsafeChars = lazyre.New(`[^A-Za-z0-9_-]`)

// ToolName is the name the model calls a server's tool by, as Claude Code
// names it: mcp__<server>__<tool>, characters other than letters, digits,
// _ and - replaced by _.
func ToolName(server, name string) string {
	return "mcp__" + unsafeChars.ReplaceAllString(server, "_") + "__" + unsafeChars.ReplaceAllString(name, "_")
}

// adapt makes the server's tools Cohort tools, in the order the server
// listed them. A tool whose input schema Cohort cannot use, or whose name
// is too long, is skipped with a warning that names it.
func (s *Server) adapt(listed []*sdk.Tool) []*sdk.Tool {
	var kept []*sdk.Tool
	seen := map[string]bool{}
	for _, t := range listed {
		full := ToolName(s.spec.Name, t.Name)
		schema, err := json.Marshal(t.InputSchema)
		if err == nil {
			err = checkInputSchema(schema)
		}
		switch {
		case err != nil:
			s.opts.warn("MCP server %q: tool %q skipped: its input schema is not usable (%v); fix the server's schema for it", s.spec.Name, t.Name, err)
			continue
		case len(full) > maxToolName:
			s.opts.warn("MCP server %q: tool %q skipped: %s is longer than %d characters; give the server or the tool a shorter name", s.spec.Name, t.Name, full, maxToolName)
			continue
		case seen[full]:
			s.opts.warn("MCP server %q: tool %q skipped: another of its tools is also called %s", s.spec.Name, t.Name, full)
			continue
		}
		seen[full] = true
		kept = append(kept, t)
	}
	return kept
}

// checkInputSchema accepts what the Messages API and the engine's input
// check take: a valid schema of type object.
func checkInputSchema(schema json.RawMessage) error {
	if err := tool.CheckSchema(schema); err != nil {
		return err
	}
	var top struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(schema, &top); err != nil || top.Type != "object" {
		return errors.New(`the top level must be {"type": "object", …}`)
	}
	return nil
}

// Tools returns the server's tools as Cohort tools (none unless it
// started), in the order the server listed them.
func (s *Server) Tools() []tool.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]tool.Tool, 0, len(s.tools))
	for _, t := range s.tools {
		schema, _ := json.Marshal(t.InputSchema)
		desc := t.Description
		if desc == "" {
			desc = fmt.Sprintf("Tool %s of the MCP server %s.", t.Name, s.spec.Name)
		}
		readOnly := t.Annotations != nil && t.Annotations.ReadOnlyHint
		out = append(out, &serverTool{srv: s, name: t.Name, readOnly: readOnly,
			def: llm.ToolDef{Name: ToolName(s.spec.Name, t.Name), Description: desc, InputSchema: schema}})
	}
	return out
}

// serverTool is one tool of an MCP server.
type serverTool struct {
	srv      *Server
	name     string // the server's name for it
	readOnly bool
	def      llm.ToolDef
}

func (t *serverTool) Def() llm.ToolDef { return t.def }

// Traits: an MCP tool is never read-only to the permission check (a
// server's readOnlyHint is its own claim, so calls ask unless a rule
// allows them, as in Claude Code); a tool the server marks read-only may
// run beside other concurrency-safe calls.
func (t *serverTool) Traits(json.RawMessage) tool.Traits {
	return tool.Traits{ConcurrencySafe: t.readOnly}
}

func (t *serverTool) Run(ctx context.Context, _ *tool.Env, input json.RawMessage) (tool.Result, error) {
	l, err := t.srv.session(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		return tool.Errorf("%s is unavailable: %v", t.def.Name, err), nil
	}
	callCtx := ctx
	if d := t.srv.opts.CallTimeout; d > 0 {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	if len(input) == 0 {
		input = json.RawMessage(`{}`)
	}
	res, err := l.cs.CallTool(callCtx, &sdk.CallToolParams{Name: t.name, Arguments: input})
	if err != nil {
		if ctx.Err() != nil {
			return tool.Result{}, ctx.Err()
		}
		if callCtx.Err() != nil {
			return tool.Errorf("%s did not answer within %s (MCP_TOOL_TIMEOUT)", t.def.Name, t.srv.opts.CallTimeout), nil
		}
		return tool.Errorf("%s failed: %v", t.def.Name, t.srv.broke(ctx, l, err)), nil
	}
	return toolResult(res), nil
}

// toolResult renders a call's content as blocks the model reads.
func toolResult(res *sdk.CallToolResult) tool.Result {
	out := tool.Result{IsError: res.IsError}
	for _, c := range res.Content {
		out.Content = append(out.Content, contentBlock(c))
	}
	if len(out.Content) == 0 && res.StructuredContent != nil {
		data, _ := json.Marshal(res.StructuredContent)
		out.Content = append(out.Content, llm.Text(string(data)))
	}
	if len(out.Content) == 0 {
		out.Content = append(out.Content, llm.Text("(the tool returned no content)"))
	}
	return out
}

func contentBlock(c sdk.Content) llm.Block {
	switch c := c.(type) {
	case *sdk.TextContent:
		return llm.Text(c.Text)
	case *sdk.ImageContent:
		return llm.Block{Type: llm.BlockImage, MediaType: c.MIMEType, Data: base64.StdEncoding.EncodeToString(c.Data)}
	case *sdk.AudioContent:
		return llm.Text(fmt.Sprintf("[audio %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
	case *sdk.ResourceLink:
		return llm.Text(fmt.Sprintf("[resource %s: %s]", c.Name, c.URI))
	case *sdk.EmbeddedResource:
		return llm.Text(resourceText(c.Resource))
	default:
		data, _ := json.Marshal(c)
		return llm.Text(string(data))
	}
}

func resourceText(r *sdk.ResourceContents) string {
	switch {
	case r == nil:
		return "[empty resource]"
	case r.Blob != nil:
		return fmt.Sprintf("[resource %s (%s): %d bytes of binary data, not shown]", r.URI, r.MIMEType, len(r.Blob))
	default:
		return strings.TrimRight(r.Text, "\n")
	}
}
