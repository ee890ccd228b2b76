package cohort

import (
	"context"
	"encoding/json"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cohort-dev/cohort/mcp"
)

// What the program hosting a session changes while it runs (the Agent
// SDK's setMcpServers, toggleMcpServer, reconnectMcpServer and
// reloadSkills): the lead gets its new tools from its next request on;
// agents running keep theirs.

// MCPChanges is what SetMCPServers did: the servers started and stopped,
// and why each that did not connect failed.
type MCPChanges = mcp.Changes

// Skill is one skill of the session: its name and what it is for.
type Skill struct{ Name, Description string }

// SetMCPServers makes configs (name → a server's configuration in Claude
// Code's format) and hosted (servers in the calling program, reached
// through their transports) the host's MCP servers, in place of those it
// set before; the configured servers stay.
func (s *Session) SetMCPServers(ctx context.Context, configs map[string]json.RawMessage, hosted map[string]sdkmcp.Transport) (MCPChanges, error) {
	if s.ctl.isClosed() {
		return MCPChanges{}, ErrClosed
	}
	return s.parts.SetMCPServers(ctx, configs, hosted), nil
}

// ToggleMCPServer turns an MCP server off (its tools go) or on again.
func (s *Session) ToggleMCPServer(ctx context.Context, name string, on bool) error {
	if s.ctl.isClosed() {
		return ErrClosed
	}
	return controlErr("ToggleMCPServer", s.parts.ToggleMCP(ctx, name, on))
}

// ReconnectMCPServer connects an MCP server again.
func (s *Session) ReconnectMCPServer(ctx context.Context, name string) error {
	if s.ctl.isClosed() {
		return ErrClosed
	}
	return controlErr("ReconnectMCPServer", s.parts.ReconnectMCP(ctx, name))
}

// ReloadSkills reads the skills directories again; the Skill tool offers
// what it found.
func (s *Session) ReloadSkills() ([]Skill, error) {
	if s.ctl.isClosed() {
		return nil, ErrClosed
	}
	var out []Skill
	for _, sk := range s.parts.ReloadSkills() {
		out = append(out, Skill{sk.Name, sk.Description})
	}
	return out, nil
}
