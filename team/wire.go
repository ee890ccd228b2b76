package team

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
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
	return withExtras(plain(w), w.extra)
}

// MarshalJSON writes the known fields, then the unknown ones in key order.
func (w wireMember) MarshalJSON() ([]byte, error) {
	type plain wireMember
	return withExtras(plain(w), w.extra)
}

// MarshalJSON writes the known fields, then the unknown ones in key order.
func (w wireAllowed) MarshalJSON() ([]byte, error) {
	type plain wireAllowed
	return withExtras(plain(w), w.extra)
}

// withExtras marshals known (a struct) and appends extra's members that do
// not collide with known's fields.
func withExtras(known any, extra map[string]json.RawMessage) ([]byte, error) {
	b, err := marshalPlain(known)
	if err != nil || len(extra) == 0 {
		return b, err
	}
	keys := knownKeys(reflect.TypeOf(known))
	var buf bytes.Buffer
	buf.Write(b[:len(b)-1]) // drop '}'
	for _, k := range slices.Sorted(maps.Keys(extra)) {
		if keys[k] {
			continue
		}
		v := extra[k]
		if !json.Valid(v) {
			return nil, fmt.Errorf("extra field %q holds invalid JSON", k)
		}
		kb, _ := json.Marshal(k)
		if buf.Len() > 1 {
			buf.WriteByte(',')
		}
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(v)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

var keyCache sync.Map // reflect.Type → map[string]bool

// knownKeys returns the JSON names of t's exported fields.
func knownKeys(t reflect.Type) map[string]bool {
	if v, ok := keyCache.Load(t); ok {
		return v.(map[string]bool)
	}
	keys := map[string]bool{}
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.IsExported() && name != "" && name != "-" {
			keys[name] = true
		}
	}
	keyCache.Store(t, keys)
	return keys
}

// extras returns the members of the JSON object raw whose keys are not
// fields of t. raw that is not an object yields nil (the typed decode
// reports that).
func extras(raw json.RawMessage, t reflect.Type) map[string]json.RawMessage {
	var all map[string]json.RawMessage
	if json.Unmarshal(raw, &all) != nil {
		return nil
	}
	keys := knownKeys(t)
	var out map[string]json.RawMessage
	for k, v := range all {
		if !keys[k] {
			if out == nil {
				out = map[string]json.RawMessage{}
			}
			out[k] = v
		}
	}
	return out
}

// collectExtras fills the extra maps of a decoded wireConfig from the
// file's bytes.
func collectExtras(data []byte, w *wireConfig) {
	w.extra = extras(data, reflect.TypeFor[wireConfig]())
	var lists struct {
		Members          []json.RawMessage `json:"members"`
		TeamAllowedPaths []json.RawMessage `json:"teamAllowedPaths"`
	}
	if json.Unmarshal(data, &lists) != nil {
		return
	}
	for i := range min(len(lists.Members), len(w.Members)) {
		w.Members[i].extra = extras(lists.Members[i], reflect.TypeFor[wireMember]())
	}
	for i := range min(len(lists.TeamAllowedPaths), len(w.TeamAllowedPaths)) {
		w.TeamAllowedPaths[i].extra = extras(lists.TeamAllowedPaths[i], reflect.TypeFor[wireAllowed]())
	}
}

// millisTime converts an epoch-milliseconds number; zero or absent is the
// zero time.
func millisTime(n json.Number, field string) (time.Time, error) {
	if n == "" {
		return time.Time{}, nil
	}
	ms, err := n.Int64()
	if err != nil {
		f, ferr := n.Float64()
		if ferr != nil || math.IsInf(f, 0) || math.Abs(f) > 1<<53 {
			return time.Time{}, fmt.Errorf("%s: %s is not a time in epoch milliseconds", field, n)
		}
		ms = int64(f)
	}
	if ms == 0 {
		return time.Time{}, nil
	}
	return time.UnixMilli(ms), nil
}

// millisNumber is the inverse of millisTime.
func millisNumber(t time.Time) json.Number {
	if t.IsZero() {
		return "0"
	}
	return json.Number(strconv.FormatInt(t.UnixMilli(), 10))
}

// ParseConfig decodes a team file. path is used in error messages only.
// Errors are *FileError with the line and column where known. The result
// is not validated against a directory name; Store does that.
func ParseConfig(path string, data []byte) (Config, error) {
	const hint = "fix the file by hand, or delete the team directory to start over"
	var w wireConfig
	if err := decodeStrict(data, &w); err != nil {
		return Config{}, jsonError(path, data, err, hint)
	}
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte("null")) {
		return Config{}, &FileError{Path: path, Err: fmt.Errorf("the file holds null, not a team"), Hint: hint}
	}
	collectExtras(data, &w)
	c, err := w.config()
	if err != nil {
		return Config{}, &FileError{Path: path, Err: err, Hint: hint}
	}
	return c, nil
}

func (w *wireConfig) config() (Config, error) {
	created, err := millisTime(w.CreatedAt, "createdAt")
	if err != nil {
		return Config{}, err
	}
	c := Config{
		Name: w.Name, Description: w.Description, CreatedAt: created,
		LeadAgentID: w.LeadAgentID, LeadSessionID: w.LeadSessionID,
		HiddenPaneIDs: nilIfEmpty(w.HiddenPaneIDs), Extra: w.extra,
	}
	for i, a := range w.TeamAllowedPaths {
		at, err := millisTime(a.AddedAt, fmt.Sprintf("teamAllowedPaths[%d].addedAt", i))
		if err != nil {
			return Config{}, err
		}
		c.TeamAllowedPaths = append(c.TeamAllowedPaths, AllowedPath{
			Path: a.Path, ToolName: a.ToolName, AddedBy: a.AddedBy, AddedAt: at, Extra: a.extra,
		})
	}
	for i, m := range w.Members {
		joined, err := millisTime(m.JoinedAt, fmt.Sprintf("members[%d].joinedAt", i))
		if err != nil {
			return Config{}, err
		}
		c.Members = append(c.Members, Member{
			AgentID: m.AgentID, Name: m.Name, AgentType: m.AgentType, Model: m.Model,
			Prompt: m.Prompt, Color: m.Color, PlanModeRequired: m.PlanModeRequired,
			JoinedAt: joined, TmuxPaneID: m.TmuxPaneID, Cwd: m.Cwd,
			WorktreePath: m.WorktreePath, SessionID: m.SessionID,
			Subscriptions: nilIfEmpty(m.Subscriptions), BackendType: BackendType(m.BackendType),
			IsActive: m.IsActive == nil || *m.IsActive, Mode: m.Mode, Extra: m.extra,
		})
	}
	return c, nil
}

// MarshalConfig encodes c as a team file: Claude Code's field names,
// two-space indentation, a final newline.
func MarshalConfig(c Config) ([]byte, error) {
	w := wireConfig{
		Name: c.Name, Description: c.Description, CreatedAt: millisNumber(c.CreatedAt),
		LeadAgentID: c.LeadAgentID, LeadSessionID: c.LeadSessionID,
		HiddenPaneIDs:    nonNil(c.HiddenPaneIDs),
		TeamAllowedPaths: []wireAllowed{}, Members: []wireMember{},
		extra: c.Extra,
	}
	for _, a := range c.TeamAllowedPaths {
		w.TeamAllowedPaths = append(w.TeamAllowedPaths, wireAllowed{
			Path: a.Path, ToolName: a.ToolName, AddedBy: a.AddedBy,
			AddedAt: millisNumber(a.AddedAt), extra: a.Extra,
		})
	}
	for _, m := range c.Members {
		active := m.IsActive
		w.Members = append(w.Members, wireMember{
			AgentID: m.AgentID, Name: m.Name, AgentType: m.AgentType, Model: m.Model,
			Prompt: m.Prompt, Color: m.Color, PlanModeRequired: m.PlanModeRequired,
			JoinedAt: millisNumber(m.JoinedAt), TmuxPaneID: m.TmuxPaneID, Cwd: m.Cwd,
			WorktreePath: m.WorktreePath, SessionID: m.SessionID,
			Subscriptions: nonNil(m.Subscriptions), BackendType: string(m.BackendType),
			IsActive: &active, Mode: m.Mode, extra: m.Extra,
		})
	}
	return indentJSON(w)
}

// marshalPlain marshals v compactly without HTML escaping.
func marshalPlain(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// indentJSON marshals v with two-space indentation and a final newline,
// without HTML escaping (paths and prompts stay readable).
func indentJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
