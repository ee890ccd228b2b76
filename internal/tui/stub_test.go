package tui

import (
	"context"
	"fmt"
	"iter"
	"sync"
	"time"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/llm"
)

// crowd stands in for a Session with many agents, for the benchmarks and
// the layout tests: Agents returns a fresh copy of its records (as
// cohort.Session does), and the test changes them with tick.
type crowd struct {
	mu          sync.Mutex
	agents      []cohort.AgentInfo
	prompts     []string // what Run was given
	model       string
	modelSource string   // who asked for the last switch
	calls       []string // StopAgent, Background, Message, Interrupt, in order
}

func (c *crowd) record(call string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, call)
	return nil
}

func newCrowd(n int, start time.Time) *crowd {
	c := &crowd{}
	c.agents = append(c.agents, cohort.AgentInfo{ID: "lead", Kind: "lead", State: cohort.AgentIdle, Started: start, Model: "claude-sonnet"})
	for i := range n {
		c.agents = append(c.agents, cohort.AgentInfo{ID: fmt.Sprintf("a%04d", i), Kind: "background", Type: "general-purpose",
			Description: fmt.Sprintf("task %04d", i), State: cohort.AgentRunning, ParentID: "lead",
			ParentToolUseID: fmt.Sprintf("toolu_%04d", i), Started: start, Model: "claude-sonnet",
			Activities: []cohort.Activity{{Tool: "Read", Description: "main.go"}}})
	}
	return c
}

// tick records one more tool call of agent i.
func (c *crowd) tick(i int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	a := &c.agents[1+i%(len(c.agents)-1)]
	a.ToolUses++
	a.Usage.InputTokens += 1200
	a.Usage.CacheReadInputTokens += 900
	a.Usage.OutputTokens += 40
	a.CostUSD += 0.0006
}

// finish marks every agent done.
func (c *crowd) finish(end time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := range c.agents[1:] {
		c.agents[1+i].State, c.agents[1+i].Ended = cohort.AgentCompleted, end
	}
}

func (c *crowd) Agents() []cohort.AgentInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]cohort.AgentInfo, len(c.agents))
	copy(out, c.agents)
	return out
}

func (c *crowd) ID() string { return "crowd" }
func (c *crowd) Run(ctx context.Context, prompt string) iter.Seq2[cohort.Event, error] {
	c.mu.Lock()
	c.prompts = append(c.prompts, prompt)
	c.mu.Unlock()
	return func(yield func(cohort.Event, error) bool) {
		yield(cohort.Event{Type: cohort.EventResult, Result: "ok"}, nil)
	}
}
func (c *crowd) Send(string) error              { return nil }
func (c *crowd) Pending() []cohort.Typed        { return nil }
func (c *crowd) Interrupt() error               { return c.record("interrupt") }
func (c *crowd) SetPermissionMode(string) error { return nil }
func (c *crowd) SetModelFrom(m, source string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.model, c.modelSource = m, source
	return nil
}
func (c *crowd) StopAgent(id string) error     { return c.record("stop " + id) }
func (c *crowd) Background(id string) error    { return c.record("background " + id) }
func (c *crowd) Message(id, text string) error { return c.record("message " + id + ": " + text) }
func (c *crowd) Compact(context.Context) error { return nil }
func (c *crowd) Clear() error                  { return nil }
func (c *crowd) Close() error                  { return nil }
func (c *crowd) Rewind(context.Context, cohort.RewindRequest) (*cohort.RewindReport, error) {
	return &cohort.RewindReport{}, c.record("rewind")
}

// toolEvents are the two events of agent i's tool call n: the call, then
// its result.
func toolEvents(i, n int) []cohort.Event {
	id, tu := fmt.Sprintf("a%04d", i), fmt.Sprintf("toolu_%04d", i)
	use := fmt.Sprintf("t%d_%d", i, n)
	return []cohort.Event{
		{Type: cohort.EventAssistant, AgentID: id, ParentToolUseID: tu, Message: &cohort.Message{Role: llm.RoleAssistant,
			Content: []llm.Block{{Type: llm.BlockText, Text: "Reading the next file."},
				{Type: llm.BlockToolUse, ID: use, Name: "Read", Input: []byte(`{"file_path":"/src/pkg/file.go"}`)}}}},
		{Type: cohort.EventUser, AgentID: id, ParentToolUseID: tu, Message: &cohort.Message{Role: llm.RoleUser,
			Content: []llm.Block{{Type: llm.BlockToolResult, ToolUseID: use, Content: []llm.Block{{Type: llm.BlockText, Text: "package pkg\n\nfunc F() {}\n"}}}}}},
	}
}
