package scenario

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// Policy answers the requests of benchmark runs and keeps the counts that
// [Spec.Check] verifies. Reply is safe for concurrent use. One Policy may
// serve several runs in a row; Reset starts the counts afresh.
type Policy struct {
	mu   sync.Mutex
	sum  Summary
	seen leadSeen
	// started and ended hold the subagent ids seen at their first and
	// final request; active is how many are between the two.
	started, ended map[int]bool
	active         int
}

// Summary is what a run did, as the fake saw it.
type Summary struct {
	// Requests counts every request; LeadRequests and SubRequests those of
	// the lead and of subagents.
	Requests     int `json:"requests"`
	LeadRequests int `json:"lead_requests"`
	SubRequests  int `json:"sub_requests"`
	// Finished counts subagents that were given their final reply.
	Finished int `json:"finished"`
	// MaxActive is the most subagents seen between their first and their
	// final request at the same time. Each agent holds a concurrency slot
	// for longer than that, so MaxActive never exceeds the agent limit when
	// the limit holds.
	MaxActive int `json:"max_active"`
	// ToolErrors counts is_error tool results subagents sent back.
	ToolErrors     int    `json:"tool_errors"`
	FirstToolError string `json:"first_tool_error,omitempty"`
	// Unmatched counts requests that belonged to no benchmark conversation
	// or did not decode.
	Unmatched      int    `json:"unmatched"`
	FirstUnmatched string `json:"first_unmatched,omitempty"`

	// Compactions counts the lead's summarisation requests.
	Compactions int `json:"compactions"`

	// The rest is gathered from every lead request, so that it survives the
	// lead's history being compacted.

	// LeadMessages and LeadBytes describe the lead's largest request.
	LeadMessages int `json:"lead_messages"`
	LeadBytes    int `json:"lead_bytes"`
	// AgentResults counts the Agent calls that got a result, AgentErrors
	// those whose result is an error.
	AgentResults int `json:"agent_results"`
	AgentErrors  int `json:"agent_errors"`
	// Notified counts the distinct task ids in <task-notification> blocks;
	// Completed those with status completed. Duplicates is the largest
	// number of surplus notifications (the same task notified again) in any
	// one lead request: 0 when each arrived exactly once.
	Notified   int `json:"notified"`
	Completed  int `json:"completed"`
	Duplicates int `json:"duplicates"`
	// Reports counts the distinct subagent reports the lead received (in
	// Agent results or notifications).
	Reports int `json:"reports"`
}

// NewPolicy returns a policy with zero counts.
func NewPolicy() *Policy { return &Policy{} }

// Reset zeroes the counts.
func (p *Policy) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sum, p.seen, p.started, p.ended, p.active = Summary{}, leadSeen{}, nil, nil, 0
}

// Reply is a fakeapi.Policy.
func (p *Policy) Reply(r *fakeapi.Request) fakeapi.Reply {
	first := r.FirstUserText()
	if w, ok, err := parseSub(first); ok {
		if err != nil {
			return p.unmatched(err.Error())
		}
		return p.subReply(r, w)
	}
	spec, next, ok, err := parseLead(first)
	if !ok || err != nil {
		msg := fmt.Sprintf("not a benchmark conversation (first user message %.120q)", first)
		if err != nil {
			msg = err.Error()
		}
		return p.unmatched(msg)
	}
	return p.leadReply(r, spec, next)
}

func (p *Policy) unmatched(msg string) fakeapi.Reply {
	p.mu.Lock()
	p.sum.Requests++
	p.sum.Unmatched++
	if p.sum.FirstUnmatched == "" {
		p.sum.FirstUnmatched = msg
	}
	p.mu.Unlock()
	return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "bench policy: " + msg}}
}

func (p *Policy) subReply(r *fakeapi.Request, w sub) fakeapi.Reply {
	turn := r.Turn()
	bad := toolErrors(r)
	p.mu.Lock()
	p.sum.Requests++
	p.sum.SubRequests++
	p.sum.ToolErrors += len(bad)
	if len(bad) > 0 && p.sum.FirstToolError == "" {
		p.sum.FirstToolError = fmt.Sprintf("bench-sub %d turn %d: %.200s", w.id, turn, bad[0])
	}
	if turn >= w.turns {
		p.sum.Finished++
	}
	p.track(w.id, turn == 0, turn >= w.turns)
	p.mu.Unlock()
	if turn >= w.turns {
		return fakeapi.TextReply(fmt.Sprintf("bench-report id=%d: made %d tool calls.", w.id, w.turns))
	}
	return fakeapi.Reply{Content: []fakeapi.Block{w.call(turn)}}
}

// track counts agent id as active from its first request to its final
// one. Retried requests are not counted twice. The caller holds p.mu.
func (p *Policy) track(id int, first, final bool) {
	if p.started == nil {
		p.started, p.ended = map[int]bool{}, map[int]bool{}
	}
	if first && !p.started[id] {
		p.started[id] = true
		p.active++
		p.sum.MaxActive = max(p.sum.MaxActive, p.active)
	}
	if final && p.started[id] && !p.ended[id] {
		p.ended[id] = true
		p.active--
	}
}

// call is the tool call of turn t.
func (w sub) call(t int) fakeapi.Block {
	if w.tools == ToolsMixed {
		switch t % 3 {
		case 0:
			return fakeapi.ToolUseBlock("", "Read", map[string]any{"file_path": w.file})
		case 1:
			return fakeapi.ToolUseBlock("", "Glob", map[string]any{"pattern": "*.txt", "path": filepath.Dir(w.file)})
		}
		return fakeapi.ToolUseBlock("", "Bash", map[string]any{"command": "true", "description": "Do nothing"})
	}
	return fakeapi.ToolUseBlock("", "Bash", map[string]any{
		"command": fmt.Sprintf("echo bench-sub-%d-%d", w.id, t), "description": "Print a marker"})
}

// toolErrors returns the text of the is_error tool results in the last
// user message.
func toolErrors(r *fakeapi.Request) []string {
	if len(r.Messages) == 0 {
		return nil
	}
	last := r.Messages[len(r.Messages)-1]
	var out []string
	for _, b := range last.Content {
		if b.Type == "tool_result" && b.IsError {
			var parts []string
			for _, c := range b.Content {
				parts = append(parts, c.Text)
			}
			out = append(out, strings.Join(parts, " "))
		}
	}
	return out
}

// Summary returns the counts so far.
func (p *Policy) Summary() Summary {
	p.mu.Lock()
	defer p.mu.Unlock()
	sum := p.sum
	p.seen.fill(&sum)
	return sum
}

// Check verifies that sum shows the whole of s done exactly once, with at
// most limit agents running at a time (0: no limit to check).
func (s Spec) Check(sum Summary, limit int) error {
	var errs []string
	want := func(what string, got, exp int) {
		if got != exp {
			errs = append(errs, fmt.Sprintf("%s = %d, want %d", what, got, exp))
		}
	}
	want("unmatched requests", sum.Unmatched, 0)
	want("tool errors", sum.ToolErrors, 0)
	want("subagent requests", sum.SubRequests, s.Agents*(s.Turns+1))
	want("subagents finished", sum.Finished, s.Agents)
	want("Agent calls answered", sum.AgentResults, s.Agents)
	want("Agent calls answered with an error", sum.AgentErrors, 0)
	want("distinct reports the lead received", sum.Reports, s.Agents)
	want("duplicate notifications", sum.Duplicates, 0)
	if limit > 0 && sum.MaxActive > limit {
		errs = append(errs, fmt.Sprintf("%d agents were active at once, over the limit of %d", sum.MaxActive, limit))
	}
	if s.Background {
		want("notified tasks", sum.Notified, s.Agents)
		want("completed notifications", sum.Completed, s.Agents)
	} else {
		want("notified tasks", sum.Notified, 0)
	}
	if len(errs) == 0 {
		return nil
	}
	msg := "scenario check failed: " + strings.Join(errs, "; ")
	if sum.FirstUnmatched != "" {
		msg += "; first unmatched: " + sum.FirstUnmatched
	}
	if sum.FirstToolError != "" {
		msg += "; first tool error: " + sum.FirstToolError
	}
	return fmt.Errorf("%s", msg)
}
