package team

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/cohort-dev/cohort/internal/jsonfile"
)

// The wire types mirror the file formats field by field. Decoding goes
// through them in one pass over the whole file, so that type errors carry
// file offsets; unknown fields are collected separately.

type wireConfig struct {
	Name             string        `json:"name"`
	Description      string        `json:"description"`
	CreatedAt        json.Number   `json:"createdAt"`
	LeadAgentID      string        `json:"leadAgentId"`
	LeadSessionID    string        `json:"leadSessionId"`
	HiddenPaneIDs    []string      `json:"hiddenPaneIds"`
	TeamAllowedPaths []wireAllowed `json:"teamAllowedPaths"`
	Members          []wireMember  `json:"members"`
	NATS             string        `json:"nats,omitempty"`

	extra map[string]json.RawMessage
}

type wireMember struct {
	AgentID          string      `json:"agentId"`
	Name             string      `json:"name"`
	AgentType        string      `json:"agentType"`
	Model            string      `json:"model"`
	Prompt           string      `json:"prompt,omitempty"`
	Color            string      `json:"color,omitempty"`
	PlanModeRequired bool        `json:"planModeRequired"`
	JoinedAt         json.Number `json:"joinedAt"`
	TmuxPaneID       string      `json:"tmuxPaneId"`
	Cwd              string      `json:"cwd"`
	WorktreePath     string      `json:"worktreePath,omitempty"`
	SessionID        string      `json:"sessionId,omitempty"`
	Subscriptions    []string    `json:"subscriptions"`
	BackendType      string      `json:"backendType,omitempty"`
	IsActive         *bool       `json:"isActive"`
	Mode             string      `json:"mode,omitempty"`
	PublicKey        string      `json:"publicKey,omitempty"`

	extra map[string]json.RawMessage
}

type wireAllowed struct {
	Path     string      `json:"path"`
	ToolName string      `json:"toolName"`
	AddedBy  string      `json:"addedBy"`
	AddedAt  json.Number `json:"addedAt"`

	extra map[string]json.RawMessage
}

// MarshalJSON writes the known fields, then the unknown ones in key order.
func (w wireConfig) MarshalJSON() ([]byte, error) {
	type plain wireConfig
	return jsonfile.WithFields(plain(w), w.extra)
}

// MarshalJSON writes the known fields, then the unknown ones in key order.
func (w wireMember) MarshalJSON() ([]byte, error) {
	type plain wireMember
	return jsonfile.WithFields(plain(w), w.extra)
}

// MarshalJSON writes the known fields, then the unknown ones in key order.
func (w wireAllowed) MarshalJSON() ([]byte, error) {
	type plain wireAllowed
	return jsonfile.WithFields(plain(w), w.extra)
}

// collectExtras fills the extra maps of a decoded wireConfig from the
// file's bytes.
func collectExtras(data []byte, w *wireConfig) {
	w.extra = jsonfile.Fields(data, reflect.TypeFor[wireConfig]())
	var lists struct {
		Members          []json.RawMessage `json:"members"`
		TeamAllowedPaths []json.RawMessage `json:"teamAllowedPaths"`
	}
	if json.Unmarshal(data, &lists) != nil {
		return
	}
	for i := range min(len(lists.Members), len(w.Members)) {
		w.Members[i].extra = jsonfile.Fields(lists.Members[i], reflect.TypeFor[wireMember]())
	}
	for i := range min(len(lists.TeamAllowedPaths), len(w.TeamAllowedPaths)) {
		w.TeamAllowedPaths[i].extra = jsonfile.Fields(lists.TeamAllowedPaths[i], reflect.TypeFor[wireAllowed]())
	}
}

// ParseConfig decodes a team file. path is used in error messages only.
// Errors are *jsonfile.Error with the line and column where known. The result
// is not validated against a directory name; Store does that.
func ParseConfig(path string, data []byte) (Config, error) {
	const hint = "fix the file by hand, or delete the team directory to start over"
	var w wireConfig
	if err := jsonfile.Decode(data, &w); err != nil {
		return Config{}, jsonfile.Explain(path, data, err, hint)
	}
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("null")) {
		return Config{}, &jsonfile.Error{Path: path, Err: fmt.Errorf("the file holds null, not a team"), Hint: hint}
	}
	collectExtras(data, &w)
	c, err := w.config()
	if err != nil {
		return Config{}, &jsonfile.Error{Path: path, Err: err, Hint: hint}
	}
	return c, nil
}

func (w *wireConfig) config() (Config, error) {
	created, err := jsonfile.MillisTime(w.CreatedAt, "createdAt")
	if err != nil {
		return Config{}, err
	}
	c := Config{
		Name: w.Name, Description: w.Description, CreatedAt: created,
		LeadAgentID: w.LeadAgentID, LeadSessionID: w.LeadSessionID,
		HiddenPaneIDs: jsonfile.NilIfEmpty(w.HiddenPaneIDs), NATS: w.NATS, Extra: w.extra,
	}
	for i, a := range w.TeamAllowedPaths {
		at, err := jsonfile.MillisTime(a.AddedAt, fmt.Sprintf("teamAllowedPaths[%d].addedAt", i))
		if err != nil {
			return Config{}, err
		}
		c.TeamAllowedPaths = append(c.TeamAllowedPaths, AllowedPath{
			Path: a.Path, ToolName: a.ToolName, AddedBy: a.AddedBy, AddedAt: at, Extra: a.extra,
		})
	}
	for i, m := range w.Members {
		joined, err := jsonfile.MillisTime(m.JoinedAt, fmt.Sprintf("members[%d].joinedAt", i))
		if err != nil {
			return Config{}, err
		}
		c.Members = append(c.Members, Member{
			AgentID: m.AgentID, Name: m.Name, AgentType: m.AgentType, Model: m.Model,
			Prompt: m.Prompt, Color: m.Color, PlanModeRequired: m.PlanModeRequired,
			JoinedAt: joined, TmuxPaneID: m.TmuxPaneID, Cwd: m.Cwd,
			WorktreePath: m.WorktreePath, SessionID: m.SessionID,
			Subscriptions: jsonfile.NilIfEmpty(m.Subscriptions), BackendType: BackendType(m.BackendType),
			IsActive: m.IsActive == nil || *m.IsActive, Mode: m.Mode, PublicKey: m.PublicKey, Extra: m.extra,
		})
	}
	return c, nil
}

// MarshalConfig encodes c as a team file: Claude Code's field names,
// two-space indentation, a final newline.
func MarshalConfig(c Config) ([]byte, error) {
	w := wireConfig{
		Name: c.Name, Description: c.Description, CreatedAt: jsonfile.Millis(c.CreatedAt),
		LeadAgentID: c.LeadAgentID, LeadSessionID: c.LeadSessionID,
		HiddenPaneIDs:    jsonfile.NonNil(c.HiddenPaneIDs),
		TeamAllowedPaths: []wireAllowed{}, Members: []wireMember{},
		NATS: c.NATS, extra: c.Extra,
	}
	for _, a := range c.TeamAllowedPaths {
		w.TeamAllowedPaths = append(w.TeamAllowedPaths, wireAllowed{
			Path: a.Path, ToolName: a.ToolName, AddedBy: a.AddedBy,
			AddedAt: jsonfile.Millis(a.AddedAt), extra: a.Extra,
		})
	}
	for _, m := range c.Members {
		active := m.IsActive
		w.Members = append(w.Members, wireMember{
			AgentID: m.AgentID, Name: m.Name, AgentType: m.AgentType, Model: m.Model,
			Prompt: m.Prompt, Color: m.Color, PlanModeRequired: m.PlanModeRequired,
			JoinedAt: jsonfile.Millis(m.JoinedAt), TmuxPaneID: m.TmuxPaneID, Cwd: m.Cwd,
			WorktreePath: m.WorktreePath, SessionID: m.SessionID,
			Subscriptions: jsonfile.NonNil(m.Subscriptions), BackendType: string(m.BackendType),
			IsActive: &active, Mode: m.Mode, PublicKey: m.PublicKey, extra: m.Extra,
		})
	}
	return jsonfile.Indent(w)
}
