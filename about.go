package cohort

import (
	"encoding/json"

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
	if s.cat == nil {
		return nil
	}
	var out []AgentType
	for _, d := range s.cat.List() {
		out = append(out, AgentType{Name: d.Name, Description: d.Description, Model: d.Model})
	}
	return out
}

// Model returns the model the session's own agent (the lead, or the
// teammate) uses now.
func (s *Session) Model() string {
	if a := s.mainAgent(); a != nil {
		return a.Info().Model
	}
	return ""
}

// PermissionMode returns the session's own agent's permission mode now.
func (s *Session) PermissionMode() string {
	s.ctl.mu.Lock()
	defer s.ctl.mu.Unlock()
	return s.modeName
}

// StatusLine returns the command of the settings' statusLine (Claude
// Code's {"type": "command", "command": …}): a terminal UI runs it and
// shows the first line it prints under the input. Empty when no settings
// file sets one, or the one that wins is not a command.
func (s *Session) StatusLine() string {
	secs := s.settings.Section("statusLine")
	if len(secs) == 0 {
		return ""
	}
	var sl struct{ Type, Command string }
	if json.Unmarshal(secs[len(secs)-1].Value, &sl) != nil || (sl.Type != "" && sl.Type != "command") {
		return ""
	}
	return sl.Command
}

// MCPServers returns the session's MCP servers and their states now.
func (s *Session) MCPServers() []MCPServer { return s.mcpServers() }

// ValidSessionID reports whether id has a session id's form (a UUID), as
// Config.SessionID and Config.Resume take it.
func ValidSessionID(id string) bool { return transcript.ValidID(id) }
