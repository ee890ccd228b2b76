package sdkproto

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cohort-dev/cohort"
)

// errInputClosed is the answer to a request stdin closed under.
var errInputClosed = errors.New("the host closed its input before answering")

// host is the CLI's side of the requests it sends the host: each waits
// for the control_response with its request_id.
type host struct {
	w *lineWriter

	mu      sync.Mutex
	pending map[string]chan responseBody
	closed  bool
}

func newHost(w *lineWriter) *host {
	return &host{w: w, pending: map[string]chan responseBody{}}
}

// ask sends req and waits for its answer, ctx's end or timeout: a request
// given up is withdrawn with control_cancel_request.
func (h *host) ask(ctx context.Context, req any, timeout time.Duration) (json.RawMessage, error) {
	id := newID()
	ch := make(chan responseBody, 1)
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, errInputClosed
	}
	h.pending[id] = ch
	h.mu.Unlock()
	h.w.write(controlRequest{Type: "control_request", RequestID: id, Request: req})
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case r, ok := <-ch:
		if !ok {
			return nil, errInputClosed
		}
		if r.Subtype == "error" {
			return nil, fmt.Errorf("the host answered with an error: %s", r.Error)
		}
		if r.Subtype != "success" {
			return nil, fmt.Errorf("the host's answer has subtype %q; want success or error", r.Subtype)
		}
		return r.Response, nil
	case <-ctx.Done():
		h.withdraw(id)
		return nil, ctx.Err()
	case <-timer.C:
		h.withdraw(id)
		return nil, fmt.Errorf("the host did not answer within %s", timeout)
	}
}

func (h *host) withdraw(id string) {
	h.mu.Lock()
	_, ok := h.pending[id]
	delete(h.pending, id)
	h.mu.Unlock()
	if ok {
		h.w.write(cancelRequest{Type: "control_cancel_request", RequestID: id})
	}
}

// answer delivers a control_response; false when no request waits for it.
func (h *host) answer(r responseBody) bool {
	h.mu.Lock()
	ch, ok := h.pending[r.RequestID]
	delete(h.pending, r.RequestID)
	h.mu.Unlock()
	if ok {
		ch <- r
	}
	return ok
}

// closeInput fails every waiting request and every later one.
func (h *host) closeInput() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for id, ch := range h.pending {
		close(ch)
		delete(h.pending, id)
	}
}

// canUseTool asks the host about one tool call of any agent.
func (srv *server) canUseTool(ctx context.Context, req cohort.PermissionRequest) (cohort.Decision, error) {
	input := req.Input
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	body := map[string]any{"subtype": "can_use_tool", "tool_name": req.Tool, "input": input,
		"tool_use_id": req.ToolUseID}
	if req.Reason != "" {
		body["decision_reason"] = req.Reason
	}
	if req.AgentKind != "lead" && req.AgentID != "" {
		body["agent_id"] = req.AgentID
		body["agent_name"] = req.AgentName
		body["agent_kind"] = req.AgentKind
		if req.AgentType != "" {
			body["agent_type"] = req.AgentType
		}
	}
	raw, err := srv.host.ask(ctx, body, srv.o.PromptTimeout)
	if err != nil {
		if ctx.Err() != nil {
			return cohort.Decision{}, ctx.Err()
		}
		return cohort.Decision{Message: "Permission was not granted: " + err.Error() + "."}, nil
	}
	var a permissionAnswer
	if err := json.Unmarshal(raw, &a); err != nil {
		return cohort.Decision{Message: "Permission was not granted: the host's answer is not a permission result."}, nil
	}
	if a.Classification != "" && !slices.Contains(classifications, a.Classification) {
		return cohort.Decision{Message: fmt.Sprintf("Permission was not granted: the host answered decisionClassification %q (want one of %s).", a.Classification, strings.Join(classifications, ", "))}, nil
	}
	switch a.Behavior {
	case "allow":
		d := cohort.Decision{Allow: true, NoPerson: a.Classification == "config"}
		if len(a.UpdatedInput) > 0 && string(a.UpdatedInput) != "null" {
			if !json.Valid(a.UpdatedInput) || a.UpdatedInput[0] != '{' {
				return cohort.Decision{Message: "Permission was not granted: the host's updatedInput is not a JSON object."}, nil
			}
			d.UpdatedInput = a.UpdatedInput
		}
		return d, nil
	case "deny":
		if a.Interrupt {
			if s := srv.session(); s != nil {
				_ = s.Interrupt()
			}
		}
		msg := strings.TrimSpace(a.Message)
		if msg == "" {
			msg = "The host denied this tool call."
		}
		return cohort.Decision{Message: msg}, nil
	default:
		return cohort.Decision{Message: fmt.Sprintf("Permission was not granted: the host answered behavior %q (want allow or deny).", a.Behavior)}, nil
	}
}

// hookFuncs turns initialize's hooks into the session's function hooks:
// each firing is a hook_callback request.
func (srv *server) hookFuncs(hooks map[string][]hookMatcher) []cohort.Hook {
	var out []cohort.Hook
	for event, matchers := range hooks {
		for _, m := range matchers {
			timeout := 60 * time.Second
			if m.Timeout > 0 {
				timeout = time.Duration(m.Timeout * float64(time.Second))
			}
			for _, id := range m.HookCallbackIDs {
				id := id
				out = append(out, cohort.Hook{Event: event, Matcher: m.Matcher, Timeout: timeout,
					Func: func(ctx context.Context, input json.RawMessage) (json.RawMessage, error) {
						return srv.hookCallback(ctx, id, input, timeout)
					}})
			}
		}
	}
	return out
}

func (srv *server) hookCallback(ctx context.Context, id string, input json.RawMessage, timeout time.Duration) (json.RawMessage, error) {
	var in struct {
		ToolUseID string `json:"tool_use_id"`
	}
	_ = json.Unmarshal(input, &in)
	body := map[string]any{"subtype": "hook_callback", "callback_id": id, "input": input}
	if in.ToolUseID != "" {
		body["tool_use_id"] = in.ToolUseID
	}
	raw, err := srv.host.ask(ctx, body, timeout)
	if err != nil {
		return nil, fmt.Errorf("host hook %s: %w", id, err)
	}
	if len(raw) == 0 {
		return json.RawMessage("{}"), nil
	}
	return raw, nil
}
