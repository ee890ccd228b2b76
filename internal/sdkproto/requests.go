package sdkproto

import (
	"context"
	"encoding/json"
	"sort"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cohort-dev/cohort"
)

// The control requests Claude Code 2.1.332 added for hosts that watch and
// steer a running session: each in a function of its own.

// followWait bounds how long a get_task_output with follow waits for an
// agent's next message before it answers with an empty page.
const followWait = 5 * time.Minute

// getTaskOutput answers get_task_output: the end of a shell task's
// output, or a page of an agent task's messages (after: the uuid of the
// last one the host has; follow: wait for at least one more while the
// agent runs).
func (srv *server) getTaskOutput(s *cohort.Session, m *inbound) {
	var in struct {
		TaskID string  `json:"task_id"`
		After  *string `json:"after"`
		Follow bool    `json:"follow"`
	}
	_ = json.Unmarshal(m.Request, &in)
	if in.TaskID == "" {
		srv.fail(m.RequestID, "get_task_output needs a task_id (from task_started or background_tasks_changed)")
		return
	}
	if !srv.log.isAgent(in.TaskID) {
		tail, total, err := s.TaskOutput(in.TaskID)
		if err != nil {
			srv.fail(m.RequestID, err.Error())
			return
		}
		srv.succeed(m.RequestID, map[string]any{"output": tail, "total_bytes": total, "truncated": int64(len(tail)) < total})
		return
	}
	p := srv.log.page(in.TaskID, in.After)
	if !in.Follow || len(p.Frames) > 0 || p.ended {
		srv.answerPage(m.RequestID, in.TaskID, p)
		return
	}
	// Wait for the agent's next message without holding up stdin.
	srv.followers.Add(1)
	go func() {
		defer srv.followers.Done()
		timer := time.NewTimer(followWait)
		defer timer.Stop()
		for len(p.Frames) == 0 && !p.ended {
			select {
			case <-p.wake:
			case <-timer.C:
				srv.answerPage(m.RequestID, in.TaskID, p)
				return
			case <-srv.stopFollow:
				srv.fail(m.RequestID, "the session is ending")
				return
			}
			p = srv.log.page(in.TaskID, in.After)
		}
		srv.answerPage(m.RequestID, in.TaskID, p)
	}()
}

func (srv *server) answerPage(requestID, taskID string, p page) {
	srv.succeed(requestID, map[string]any{"output": "", "total_bytes": 0, "truncated": false, "task_id": taskID,
		"messages": p, "done": true, "last": p.Last, "more": p.more})
}

// getContextUsage answers get_context_usage from the lead's conversation
// as it stands: estimates, by part, against the model's window.
func (srv *server) getContextUsage(s *cohort.Session, m *inbound) {
	u, err := s.ContextUsage()
	if err != nil {
		srv.fail(m.RequestID, err.Error())
		return
	}
	window := u.Window
	if window == 0 {
		window = 200_000
	}
	used := u.System + u.Tools + u.MCPTools + u.Messages
	free := max(window-used, 0)
	cats := []map[string]any{
		{"id": "system_prompt", "name": "System prompt", "tokens": u.System, "color": "promptBorder", "kind": "used"},
		{"id": "system_tools", "name": "System tools", "tokens": u.Tools, "color": "inactive", "kind": "used"},
		{"id": "mcp_tools", "name": "MCP tools", "tokens": u.MCPTools, "color": "cyan_FOR_SUBAGENTS_ONLY", "kind": "used"},
		{"id": "messages", "name": "Messages", "tokens": u.Messages, "color": "purple_FOR_SUBAGENTS_ONLY", "kind": "used"},
		{"id": "free_space", "name": "Free space", "tokens": free, "color": "promptBorder", "kind": "free"},
	}
	srv.succeed(m.RequestID, map[string]any{
		"categories": cats, "totalTokens": used, "maxTokens": window, "rawMaxTokens": window,
		"percentage": float64(used) * 100 / float64(window), "gridRows": []any{}, "model": u.Model,
		"memoryFiles": []any{}, "mcpTools": []any{}, "agents": []any{},
	})
}

// mcpSetServers answers mcp_set_servers: the servers given replace those
// the host set before. Servers of type sdk are the host's own, reached
// through mcp_message as initialize's sdkMcpServers are.
func (srv *server) mcpSetServers(ctx context.Context, s *cohort.Session, m *inbound) {
	var in struct {
		Servers map[string]json.RawMessage `json:"servers"`
	}
	if err := json.Unmarshal(m.Request, &in); err != nil {
		srv.fail(m.RequestID, "mcp_set_servers: servers must be an object of server configurations: "+err.Error())
		return
	}
	hosted := map[string]sdkmcp.Transport{}
	for name, raw := range in.Servers {
		var c struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(raw, &c) == nil && c.Type == "sdk" {
			hosted[name] = bridge{srv: srv, name: name}
		}
	}
	// Connecting waits on the servers, and an sdk server answers through
	// stdin: the answer comes from a goroutine.
	srv.followers.Add(1)
	go func() {
		defer srv.followers.Done()
		ch, err := s.SetMCPServers(ctx, in.Servers, hosted)
		if err != nil {
			srv.fail(m.RequestID, err.Error())
			return
		}
		sort.Strings(ch.Added)
		sort.Strings(ch.Removed)
		srv.succeed(m.RequestID, map[string]any{"added": nonNil(ch.Added), "removed": nonNil(ch.Removed), "errors": ch.Errors})
	}()
}

// mcpToggle answers mcp_toggle: a server off (its tools go) or on again.
func (srv *server) mcpToggle(ctx context.Context, s *cohort.Session, m *inbound) {
	var in struct {
		ServerName string `json:"serverName"`
		Enabled    *bool  `json:"enabled"`
	}
	if json.Unmarshal(m.Request, &in) != nil || in.ServerName == "" || in.Enabled == nil {
		srv.fail(m.RequestID, `mcp_toggle needs "serverName" and "enabled" (true or false)`)
		return
	}
	srv.inBackground(m.RequestID, func() error { return s.ToggleMCPServer(ctx, in.ServerName, *in.Enabled) })
}

// mcpReconnect answers mcp_reconnect: a server connected again.
func (srv *server) mcpReconnect(ctx context.Context, s *cohort.Session, m *inbound) {
	var in struct {
		ServerName string `json:"serverName"`
	}
	if json.Unmarshal(m.Request, &in) != nil || in.ServerName == "" {
		srv.fail(m.RequestID, `mcp_reconnect needs "serverName"`)
		return
	}
	srv.inBackground(m.RequestID, func() error { return s.ReconnectMCPServer(ctx, in.ServerName) })
}

// reloadSkills answers reload_skills with the skills found now.
func (srv *server) reloadSkills(s *cohort.Session, m *inbound) {
	skills, err := s.ReloadSkills()
	if err != nil {
		srv.fail(m.RequestID, err.Error())
		return
	}
	rows := []map[string]any{}
	for _, sk := range skills {
		rows = append(rows, map[string]any{"name": sk.Name, "description": sk.Description, "argumentHint": ""})
	}
	srv.succeed(m.RequestID, map[string]any{"skills": rows})
}

// inBackground runs a request that may wait on an MCP server (one of the
// host's answers through stdin) and answers it when done.
func (srv *server) inBackground(requestID string, do func() error) {
	srv.followers.Add(1)
	go func() {
		defer srv.followers.Done()
		if err := do(); err != nil {
			srv.fail(requestID, err.Error())
			return
		}
		srv.succeed(requestID, nil)
	}()
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
