package sdkproto

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cohort-dev/cohort"
)

// control answers one control request from the host. Only a session that
// cannot be made is an error (it ends the protocol).
func (srv *server) control(ctx context.Context, lineNo int, m *inbound) error {
	if m.RequestID == "" {
		srv.problem(lineNo, `a control_request needs a "request_id"; the request was not run`)
		return nil
	}
	var r request
	if err := json.Unmarshal(m.Request, &r); err != nil || r.Subtype == "" {
		srv.fail(m.RequestID, `the request needs "request": {"subtype": …}`)
		srv.problem(lineNo, "a control_request without a request subtype")
		return nil
	}
	if r.Subtype == "initialize" {
		return srv.initialize(ctx, lineNo, m)
	}
	s := srv.session()
	if s == nil {
		if err := srv.open(ctx, nil); err != nil {
			srv.fail(m.RequestID, err.Error())
			return err
		}
		s = srv.session()
	}
	switch r.Subtype {
	case "interrupt":
		queued := srv.queued()
		if err := s.Interrupt(); err != nil {
			srv.fail(m.RequestID, err.Error())
			return nil
		}
		srv.succeed(m.RequestID, map[string]any{"still_queued": queued})
	case "set_permission_mode":
		var in struct {
			Mode string `json:"mode"`
		}
		_ = json.Unmarshal(m.Request, &in)
		if err := s.SetPermissionMode(in.Mode); err != nil {
			srv.fail(m.RequestID, err.Error())
			return nil
		}
		srv.succeed(m.RequestID, map[string]any{"mode": s.PermissionMode()})
	case "set_model":
		var in struct {
			Model *string `json:"model"`
		}
		_ = json.Unmarshal(m.Request, &in)
		model := srv.defaultModel
		if in.Model != nil && *in.Model != "" && *in.Model != "default" {
			model = *in.Model
		}
		if err := s.SetModel(model); err != nil {
			srv.fail(m.RequestID, err.Error())
			return nil
		}
		srv.succeed(m.RequestID, map[string]any{"model": s.Model()})
	case "stop_task":
		var in struct {
			TaskID string `json:"task_id"`
		}
		_ = json.Unmarshal(m.Request, &in)
		if err := stopTask(s, in.TaskID); err != nil {
			srv.fail(m.RequestID, err.Error())
			return nil
		}
		srv.succeed(m.RequestID, nil)
	case "mcp_status":
		servers := []map[string]any{}
		for _, sv := range s.MCPServers() {
			servers = append(servers, map[string]any{"name": sv.Name, "status": sv.Status})
		}
		srv.succeed(m.RequestID, map[string]any{"mcpServers": servers})
	case "get_task_output":
		srv.getTaskOutput(s, m)
	case "get_context_usage":
		srv.getContextUsage(s, m)
	case "mcp_set_servers":
		srv.mcpSetServers(ctx, s, m)
	case "mcp_toggle":
		srv.mcpToggle(ctx, s, m)
	case "mcp_reconnect":
		srv.mcpReconnect(ctx, s, m)
	case "reload_skills":
		srv.reloadSkills(s, m)
	case "rewind_files":
		srv.rewindFiles(ctx, s, m)
	default:
		msg := fmt.Sprintf("unsupported control request subtype %q (Cohort answers initialize, interrupt, set_permission_mode, set_model, stop_task, mcp_status, mcp_message, mcp_set_servers, mcp_toggle, mcp_reconnect, get_task_output, get_context_usage and reload_skills)", r.Subtype)
		srv.fail(m.RequestID, msg)
		srv.problem(lineNo, msg)
	}
	return nil
}

// stopTask stops the agent that runs task id (or the agent with that id or
// name).
func stopTask(s *cohort.Session, id string) error {
	if id == "" {
		return errors.New("stop_task needs a task_id")
	}
	for _, a := range s.Agents() {
		if a.TaskID == id {
			return s.StopAgent(a.ID)
		}
	}
	return s.StopAgent(id)
}

// initialize makes the session from the flags and the host's hooks,
// agents and prompts, and answers with what it has.
func (srv *server) initialize(ctx context.Context, lineNo int, m *inbound) error {
	srv.mu.Lock()
	again := srv.initialized || srv.s != nil
	srv.initialized = true
	srv.mu.Unlock()
	if again {
		srv.fail(m.RequestID, "the session is initialized already; initialize comes once, before the first user message")
		return nil
	}
	var in initRequest
	if err := json.Unmarshal(m.Request, &in); err != nil {
		msg := "initialize: " + err.Error()
		srv.fail(m.RequestID, msg)
		return errors.New(msg)
	}
	// The session is made while stdin is still read: its SDK-hosted MCP
	// servers answer through control responses on stdin. Lines other than
	// control responses wait for it (awaitOpen).
	srv.opening = make(chan struct{})
	go func() {
		defer close(srv.opening)
		if err := srv.open(ctx, &in); err != nil {
			srv.fail(m.RequestID, err.Error())
			srv.openErr = err
			close(srv.dead)
			return
		}
		srv.answerInitialize(m.RequestID)
	}()
	return nil
}

// awaitOpen waits for a session initialize is making; its error, if it
// could not be made.
func (srv *server) awaitOpen(ctx context.Context) error {
	if srv.opening == nil {
		return nil
	}
	select {
	case <-srv.opening:
		return srv.openErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// answerInitialize answers initialize with what the session has.
func (srv *server) answerInitialize(requestID string) {
	s := srv.session()
	agents := []map[string]any{}
	for _, t := range s.AgentTypes() {
		a := map[string]any{"name": t.Name, "description": t.Description}
		if t.Model != "" {
			a["model"] = t.Model
		}
		agents = append(agents, a)
	}
	srv.w.write(controlResponse{Type: "control_response", Response: map[string]any{
		"subtype": "success", "request_id": requestID,
		"response": map[string]any{
			"commands": []any{}, "agents": agents,
			"output_style": "default", "available_output_styles": []string{"default"},
			"models":  []map[string]any{{"value": "default", "resolvedModel": srv.defaultModel, "displayName": "Default", "description": srv.defaultModel}},
			"account": map[string]any{}, "pid": os.Getpid(),
			"claude_code_version": cohort.ProtocolVersion, "cohort_version": cohort.Version(),
			"current_permission_mode": s.PermissionMode(), "session_id": s.ID(),
		},
		"pending_permission_requests": []any{}, "pending_user_dialog_requests": []any{},
	}})
}

// open makes the session: the flags' configuration with initialize's
// additions.
func (srv *server) open(ctx context.Context, in *initRequest) error {
	cfg := srv.o.Config
	cfg.Wake = srv.woken
	if srv.o.PermissionPrompts {
		cfg.CanUseTool = srv.canUseTool
	}
	if in != nil {
		cfg.Hooks = append(append([]cohort.Hook(nil), cfg.Hooks...), srv.hookFuncs(in.Hooks)...)
		agents, err := mergeAgents(cfg.Agents, in.Agents)
		if err != nil {
			return err
		}
		cfg.Agents = agents
		sys, err := systemPrompt(in.SystemPrompt)
		if err != nil {
			return fmt.Errorf("initialize: %w", err)
		}
		if strings.TrimSpace(sys) != "" {
			cfg.SystemPrompt = sys
		}
		if in.AppendSystemPrompt != "" {
			cfg.AppendSystemPrompt = strings.TrimLeft(cfg.AppendSystemPrompt+"\n\n"+in.AppendSystemPrompt, "\n")
		}
		if len(in.JSONSchema) > 0 && string(in.JSONSchema) != "null" {
			cfg.JSONSchema = string(in.JSONSchema)
		}
		if len(in.SDKMCPServers) > 0 {
			cfg.MCPTransports = map[string]sdkmcp.Transport{}
			for name, t := range cfg.MCPTransports {
				cfg.MCPTransports[name] = t
			}
			for _, name := range in.SDKMCPServers {
				cfg.MCPTransports[name] = bridge{srv: srv, name: name}
			}
		}
	}
	s, err := cohort.New(ctx, cfg)
	if err != nil {
		return err
	}
	srv.mu.Lock()
	srv.s = s
	srv.defaultModel = s.Model()
	srv.mu.Unlock()
	return nil
}

// mergeAgents lays initialize's agent definitions over --agents' JSON.
func mergeAgents(flag string, init map[string]json.RawMessage) (string, error) {
	if len(init) == 0 {
		return flag, nil
	}
	all := map[string]json.RawMessage{}
	if strings.TrimSpace(flag) != "" {
		if err := json.Unmarshal([]byte(flag), &all); err != nil {
			return "", fmt.Errorf("--agents: %w", err)
		}
	}
	for name, def := range init {
		all[name] = def
	}
	data, err := json.Marshal(all)
	return string(data), err
}

func (srv *server) succeed(id string, payload map[string]any) {
	body := map[string]any{"subtype": "success", "request_id": id}
	if payload != nil {
		body["response"] = payload
	}
	srv.w.write(controlResponse{Type: "control_response", Response: body})
}

func (srv *server) fail(id, msg string) {
	srv.w.write(controlResponse{Type: "control_response", Response: map[string]any{
		"subtype": "error", "request_id": id, "error": msg}})
}
