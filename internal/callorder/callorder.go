// Package callorder keeps an event that a tool call caused behind the
// message that made the call.
//
// The engine starts a call as soon as its tool_use block is complete, while
// the rest of the assistant message may still be streaming; an agent
// started that way reports task_started before the message that asked for
// it exists as an event. A reader of the session's events (stream-json,
// the Agent SDK, the terminal UI) must see the call first: Claude Code's
// order, and the only one in which the task's tool_use_id refers to
// something already seen.
//
// Decisions the spec leaves open: an event is held only while the block
// that caused it is known to be streaming (its block_start was seen and its
// message not yet emitted); while anything is held, later events wait
// behind it, so each task's events keep their order; what is held is let
// go when its message is emitted, or all at once by Flush (a retry dropped
// the partial message, or the turn ended), so nothing waits forever.
package callorder

import (
	"sync"

	"github.com/cohort-dev/cohort/llm"
)

// Gate orders events behind the messages whose calls caused them. Its
// methods may be called from any goroutine; push is called with the
// gate's lock held, so events leave in the order the gate decided.
type Gate[E any] struct {
	mu        sync.Mutex
	streaming map[string]bool
	held      []heldEvent[E]
}

type heldEvent[E any] struct {
	callID string
	ev     E
}

// Streaming records that the tool_use block callID has begun in a message
// not yet emitted.
func (g *Gate[E]) Streaming(callID string) {
	if callID == "" {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.streaming == nil {
		g.streaming = map[string]bool{}
	}
	g.streaming[callID] = true
}

// Admit pushes ev, which callID caused ("" for none), unless it must wait:
// its call's message is still streaming, or earlier events wait.
func (g *Gate[E]) Admit(callID string, ev E, push func(E)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.held) > 0 || (callID != "" && g.streaming[callID]) {
		g.held = append(g.held, heldEvent[E]{callID, ev})
		return
	}
	push(ev)
}

// Emitted records that the message holding callIDs was emitted, and
// pushes what no longer waits.
func (g *Gate[E]) Emitted(callIDs []string, push func(E)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, id := range callIDs {
		delete(g.streaming, id)
	}
	g.release(push)
}

// Flush forgets every streaming message and pushes everything held.
func (g *Gate[E]) Flush(push func(E)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	clear(g.streaming)
	g.release(push)
}

// release pushes held events in order up to the first that still waits.
func (g *Gate[E]) release(push func(E)) {
	n := 0
	for _, h := range g.held {
		if h.callID != "" && g.streaming[h.callID] {
			break
		}
		push(h.ev)
		n++
	}
	g.held = append(g.held[:0], g.held[n:]...)
}

// CallIDs are the ids of the tool_use blocks in content.
func CallIDs(content []llm.Block) []string {
	var ids []string
	for _, b := range content {
		if b.Type == llm.BlockToolUse {
			ids = append(ids, b.ID)
		}
	}
	return ids
}
