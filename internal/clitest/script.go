package clitest

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// Conv keys a policy on the conversation's first user message, so the lead
// and its subagents each follow their own script.
type Conv struct {
	mu    sync.Mutex
	steps map[string][]func(*fakeapi.Request) fakeapi.Reply
}

// NewConv is a Conv with no scripts.
func NewConv() *Conv { return &Conv{steps: map[string][]func(*fakeapi.Request) fakeapi.Reply{}} }

// On adds the replies, by turn, for conversations whose first user message
// contains marker.
func (c *Conv) On(marker string, steps ...func(*fakeapi.Request) fakeapi.Reply) *Conv {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.steps[marker] = steps
	return c
}

// Policy is the fakeapi.Policy that plays the scripts.
func (c *Conv) Policy(r *fakeapi.Request) fakeapi.Reply {
	c.mu.Lock()
	var steps []func(*fakeapi.Request) fakeapi.Reply
	first := r.FirstUserText()
	for marker, s := range c.steps {
		if strings.Contains(first, marker) {
			steps = s
		}
	}
	c.mu.Unlock()
	turn := r.Turn()
	if steps == nil || turn >= len(steps) {
		return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "test policy has no reply for this turn: " + first}}
	}
	return steps[turn](r)
}

// Text is a reply with text s.
func Text(s string) func(*fakeapi.Request) fakeapi.Reply {
	return func(*fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply(s) }
}

// Calls is a reply that calls the tools of blocks.
func Calls(blocks ...fakeapi.Block) func(*fakeapi.Request) fakeapi.Reply {
	return func(*fakeapi.Request) fakeapi.Reply { return fakeapi.Reply{Content: blocks} }
}

// Use is a tool_use block calling tool name with input.
func Use(name string, input any) fakeapi.Block { return fakeapi.ToolUseBlock("", name, input) }

// ToolResults returns the tool_result texts of a request's last message.
func ToolResults(r *fakeapi.Request) []string {
	last := r.Messages[len(r.Messages)-1]
	var out []string
	for _, b := range last.Content {
		if b.Type == "tool_result" {
			var parts []string
			for _, c := range b.Content {
				parts = append(parts, c.Text)
			}
			if b.IsError {
				parts = append([]string{"ERROR:"}, parts...)
			}
			out = append(out, strings.Join(parts, ""))
		}
	}
	return out
}

// Router answers each request with the reply of the first route whose
// marker occurs in the conversation's first user message. Unlike conv it
// hands the whole request to one function, so a route can answer any number
// of turns (the lead's turn count depends on how notifications batch).
type Router struct {
	mu     sync.Mutex
	routes []route
}

type route struct {
	marker string
	reply  func(*fakeapi.Request) fakeapi.Reply
}

// On routes the conversations whose first user message contains marker
// to reply.
func (rt *Router) On(marker string, reply func(*fakeapi.Request) fakeapi.Reply) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.routes = append(rt.routes, route{marker, reply})
}

// Policy is the fakeapi.Policy that routes each request.
func (rt *Router) Policy(r *fakeapi.Request) fakeapi.Reply {
	first := r.FirstUserText()
	rt.mu.Lock()
	var reply func(*fakeapi.Request) fakeapi.Reply
	for _, ro := range rt.routes {
		if strings.Contains(first, ro.marker) {
			reply = ro.reply
			break
		}
	}
	rt.mu.Unlock()
	if reply == nil {
		return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "test router has no route for: " + first}}
	}
	return reply(r)
}

// Barrier releases its waiters once n have arrived, or fails them after a
// deadline: a policy that uses it proves that n requests were in flight at
// the same time.
type Barrier struct {
	mu      sync.Mutex
	n       int
	arrived int
	open    chan struct{}
}

// NewBarrier is a Barrier for n waiters.
func NewBarrier(n int) *Barrier { return &Barrier{n: n, open: make(chan struct{})} }

// Wait arrives at the barrier and waits for it to open; false when ctx
// ended or 20 s passed first.
func (b *Barrier) Wait(ctx context.Context) bool {
	b.mu.Lock()
	b.arrived++
	if b.arrived == b.n {
		close(b.open)
	}
	b.mu.Unlock()
	select {
	case <-b.open:
		return true
	case <-ctx.Done():
		return false
	case <-time.After(20 * time.Second):
		return false
	}
}
