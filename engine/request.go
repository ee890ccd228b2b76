package engine

import (
	"slices"

	"github.com/cohort-dev/cohort/llm"
)

// buildRequest renders the next request from the history. Only the parts
// that carry cache markers are copied; everything else is shared with the
// history, read-only.
func (a *Conversation) buildRequest() *llm.Request {
	a.mu.Lock()
	msgs := slices.Clone(a.history)
	a.mu.Unlock()
	return a.requestFor(msgs)
}

// requestFor renders a request around msgs, which it takes ownership of.
func (a *Conversation) requestFor(msgs []llm.Message) *llm.Request {
	a.mu.Lock()
	defs := slices.Clone(a.defs)
	model := a.model
	a.mu.Unlock()
	req := &llm.Request{
		Model:      model,
		System:     slices.Clone(a.cfg.System),
		Tools:      defs,
		Messages:   msgs,
		MaxTokens:  a.cfg.MaxTokens,
		Thinking:   a.cfg.Thinking,
		Effort:     a.cfg.Effort,
		Background: a.cfg.Background,
	}
	if a.cfg.CacheMarkers != nil {
		a.cfg.CacheMarkers(req)
	} else {
		PlaceCacheMarkers(req)
	}
	return req
}

// PlaceCacheMarkers applies the default breakpoint policy to req: after the
// last tool that is not deferred (a deferred one is not in the prompt),
// after the last system block, and on the last block of the last message.
// It first clears any marker already present, copying each message it
// touches, so markers never leak into a shared history.
func PlaceCacheMarkers(req *llm.Request) {
	ClearCacheMarkers(req)
	if n := LastLoadedTool(req.Tools); n >= 0 {
		req.Tools[n].Cache = true
	}
	if n := len(req.System); n > 0 {
		req.System[n-1].Cache = true
	}
	MarkMessage(req, len(req.Messages)-1, -1)
}

// ClearCacheMarkers removes every marker from req, copying what it changes.
func ClearCacheMarkers(req *llm.Request) {
	for i := range req.Tools {
		req.Tools[i].Cache = false
	}
	for i := range req.System {
		req.System[i].Cache = false
	}
	for i, m := range req.Messages {
		if !slices.ContainsFunc(m.Content, func(b llm.Block) bool { return b.Cache }) {
			continue
		}
		m.Content = slices.Clone(m.Content)
		for j := range m.Content {
			m.Content[j].Cache = false
		}
		req.Messages[i] = m
	}
}

// MarkMessage sets a marker on block j of message i (j < 0 counts from the
// end), copying that message's content first. Out-of-range indexes are
// ignored.
func MarkMessage(req *llm.Request, i, j int) {
	if i < 0 || i >= len(req.Messages) {
		return
	}
	m := req.Messages[i]
	if j < 0 {
		j += len(m.Content)
	}
	if j < 0 || j >= len(m.Content) {
		return
	}
	m.Content = slices.Clone(m.Content)
	m.Content[j].Cache = true
	req.Messages[i] = m
}

// LastLoadedTool is the index of the last tool of tools that is not
// deferred, -1 when there is none.
func LastLoadedTool(tools []llm.ToolDef) int {
	for i := len(tools) - 1; i >= 0; i-- {
		if !tools[i].Defer {
			return i
		}
	}
	return -1
}
