package cohort

import (
	"github.com/cohort-dev/cohort/internal/assemble"
	"github.com/cohort-dev/cohort/mcp"
	"github.com/cohort-dev/cohort/transcript"
)

// AgentType is an agent definition the session's agents can spawn (the
// Agent tool's subagent_type).
type AgentType struct {
	Name        string
	Description string
	Model       string
}

// AgentTypes returns the agent definitions the session knows, as the
// Agent tool offers them.
func (s *Session) AgentTypes() []AgentType {
	cat := s.parts.Catalog()
	if cat == nil {
		return nil
	}
	var out []AgentType
	for _, d := range cat.List() {
		out = append(out, AgentType{Name: d.Name, Description: d.Description, Model: d.Model})
	}
	return out
}

// Model returns the model the session's own agent (the lead, or the
// teammate) uses now.
func (s *Session) Model() string {
	if a := s.parts.MainAgent(); a != nil {
		return a.Info().Model
	}
	return ""
}

// PermissionMode returns the session's own agent's permission mode now.
func (s *Session) PermissionMode() string {
	s.ctl.mu.Lock()
	defer s.ctl.mu.Unlock()
	return s.mode
}

// MCPServers returns the session's MCP servers and their states now.
func (s *Session) MCPServers() []MCPServer {
	return append([]MCPServer{}, mcpServers(s.parts.Statuses())...)
}

func mcpServers(sts []mcp.Status) []MCPServer {
	var out []MCPServer
	for _, st := range sts {
		out = append(out, MCPServer{Name: st.Name, Status: st.State, Scope: st.Scope, Source: st.Source, Tools: st.Tools, Error: st.Error})
	}
	return out
}

// MCPServer is one MCP server as system/init lists it (Claude Code's
// mcp_servers: [{name, status}]) and cohort mcp list shows it: its state,
// where it is configured, its tools and why it failed or is disabled.
type MCPServer struct {
	Name   string   `json:"name"`
	Status string   `json:"status"`
	Scope  string   `json:"-"`
	Source string   `json:"-"`
	Tools  []string `json:"-"`
	Error  string   `json:"-"`
}

// MemoryDir is the session's project memory directory ("" when refused).
func (s *Session) MemoryDir() string { return s.parts.MemoryDir() }

// ValidSessionID reports whether id is a session id (a UUID), for Config.Resume.
func ValidSessionID(id string) bool { return transcript.ValidID(id) }

// version is set at link time for a release build:
// go build -ldflags "-X github.com/cohort-dev/cohort.version=1.2.3".
var version string

// Version is this build's version: the one set at link time, else the
// module version `go install …@vX` recorded, else "0.0.0-devel".
func Version() string { return assemble.Version(version) }
