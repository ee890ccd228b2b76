package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
)

// pending is a tool call after lookup and validation.
type pending struct {
	use    llm.Block
	tool   tool.Tool
	traits tool.Traits
	// fail, when set, is the is_error text to return without running.
	fail string
}

func (p *pending) parallel() bool {
	return p.fail == "" && p.traits.ReadOnly && p.traits.ConcurrencySafe
}

func (a *Conversation) prepare(u llm.Block) *pending {
	p := &pending{use: u}
	a.mu.Lock()
	t, ok := a.tools[u.Name]
	a.mu.Unlock()
	withheld, refused := a.cfg.Withheld[u.Name]
	lacking, known := a.cfg.Lacking[u.Name]
	switch {
	case refused:
		p.fail = fmt.Sprintf("Error: %s is not available to you: %s. Your tools: %s.", u.Name, withheld, a.toolNames())
		return p
	case !ok && known:
		p.fail = fmt.Sprintf("Error: %s is not available to you: %s. Your tools: %s.", u.Name, lacking, a.toolNames())
		return p
	case !ok:
		p.fail = fmt.Sprintf("Error: no tool named %q is available to you. Your tools: %s.", u.Name, a.toolNames())
		return p
	}
	p.tool = t
	input := u.Input
	if len(input) == 0 {
		input = json.RawMessage(`{}`)
	}
	input = tool.DropNulls(t, input)
	if err := tool.ValidateInput(t.Def().InputSchema, input); err != nil {
		p.fail = fmt.Sprintf("InputValidationError: %s input is invalid: %v", u.Name, err)
		return p
	}
	p.use.Input = input
	p.traits = t.Traits(input)
	return p
}

// toolNames lists the tools the agent can call, sorted: its pool less what
// is withheld.
func (a *Conversation) toolNames() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	names := make([]string, 0, len(a.defs))
	for _, d := range a.defs {
		if _, withheld := a.cfg.Withheld[d.Name]; !withheld {
			names = append(names, d.Name)
		}
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// toolStarted emits the EventToolStart of a call about to run.
func (a *Conversation) toolStarted(p *pending) {
	a.emit(Event{Kind: EventToolStart, Tool: &ToolEvent{ID: p.use.ID, Name: p.use.Name, Input: p.use.Input}})
}

// execute runs one call through hooks and the gate and returns its
// tool_result block and the result it came from (its EventToolStart was
// emitted, toolStarted).
func (a *Conversation) execute(ctx context.Context, p *pending) (llm.Block, tool.Result) {
	start := a.cfg.Now()
	res, denied := a.call(ctx, p)
	a.emit(Event{Kind: EventToolDone, Tool: &ToolEvent{ID: p.use.ID, Name: p.use.Name, Input: p.use.Input,
		Result: &res, Duration: a.cfg.Now().Sub(start), Denied: denied}})
	content := res.Content
	if len(content) == 0 {
		content = []llm.Block{llm.Text("(no output)")}
	}
	return llm.Block{Type: llm.BlockToolResult, ToolUseID: p.use.ID, Content: content, IsError: res.IsError}, res
}

// call runs one call; denied is the gate's reason when the gate refused it.
func (a *Conversation) call(ctx context.Context, p *pending) (res tool.Result, denied string) {
	if p.fail != "" {
		return tool.Errorf("%s", p.fail), ""
	}
	env := a.toolEnv()
	env.ToolUseID = p.use.ID
	c := &Call{ID: p.use.ID, Name: p.use.Name, Input: p.use.Input, Traits: p.traits, Env: &env, Tool: p.tool}
	if a.cfg.Hooks != nil {
		hv := a.cfg.Hooks.PreToolUse(ctx, c)
		if hv.Deny {
			return tool.Errorf("Blocked by a PreToolUse hook: %s", hv.Reason), ""
		}
		if hv.Input != nil {
			if err := tool.ValidateInput(p.tool.Def().InputSchema, hv.Input); err != nil {
				return tool.Errorf("A PreToolUse hook rewrote the input into an invalid one: %v", err), ""
			}
			c.Input = hv.Input
			c.Traits = p.tool.Traits(hv.Input)
		}
		c.HookApproved = hv.Allow
	}
	// Without a gate nothing is checked, so nothing narrows what the call
	// may do; with one, its verdict says.
	env.Confinement = tool.ConfineWrite
	if a.cfg.Gate != nil {
		v := a.cfg.Gate.Check(ctx, c)
		if !v.Allow {
			return tool.Errorf("Permission denied: %s", v.Reason), v.Reason
		}
		env.Approved = v.Approved
		if v.Input != nil {
			if err := tool.ValidateInput(p.tool.Def().InputSchema, v.Input); err != nil {
				return tool.Errorf("The approved input is invalid: %v", err), ""
			}
			c.Input = v.Input
		}
		env.Confinement = v.Confinement
	}
	ran := a.cfg.Now()
	res, err := p.tool.Run(ctx, &env, c.Input)
	c.Duration = a.cfg.Now().Sub(ran)
	if err != nil {
		if byUser(ctx) {
			return tool.Errorf("Interrupted by the user: they stopped your turn while %s was running. Wait for their next message.", p.use.Name), ""
		}
		if ctx.Err() != nil {
			return tool.Errorf("Interrupted: the agent was stopped while %s was running.", p.use.Name), ""
		}
		res = tool.Errorf("Error: %v", err)
	}
	if a.cfg.Hooks != nil {
		if extra := a.cfg.Hooks.PostToolUse(ctx, c, &res); extra != "" {
			res.Content = append(res.Content, llm.Text(extra))
		}
	}
	return res, ""
}
