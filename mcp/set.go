package mcp

import (
	"context"
	"slices"
	"sync"

	"github.com/cohort-dev/cohort/tool"
)

// Set is the servers of a session (or of one agent): started together,
// closed together. Safe for concurrent use.
type Set struct {
	mu      sync.Mutex
	servers []*Server
	opts    Options
	// off are the servers the host turned off (Toggle), which it may turn
	// on again; a server disabled for want of approval is not among them.
	off map[string]bool
}

// StartAll starts the servers of specs at once and returns when each has
// connected, failed or timed out (Options.StartTimeout); a server that
// did not start is reported through Options.Warn and keeps state failed.
// The Set keeps the order of specs.
func StartAll(ctx context.Context, specs []Spec, o Options) *Set {
	set := &Set{servers: make([]*Server, len(specs)), opts: o, off: map[string]bool{}}
	for _, spec := range specs {
		if n := spec.SandboxNotice(o.Confined); n != "" && !spec.Disabled {
			o.warn("%s", n)
		}
	}
	var wg sync.WaitGroup
	for i, spec := range specs {
		wg.Go(func() { set.servers[i] = Start(ctx, spec, o) })
	}
	wg.Wait()
	for _, s := range set.servers {
		st := s.Status()
		switch st.State {
		case StateFailed:
			o.warn("%s (%s)", st.Error, st.Source)
		case StateDisabled:
			o.warn("MCP server %q (%s) is not started: %s", st.Name, st.Source, st.Error)
		}
	}
	return set
}

// Servers returns the servers in order.
func (set *Set) Servers() []*Server {
	if set == nil {
		return nil
	}
	set.mu.Lock()
	defer set.mu.Unlock()
	return slices.Clone(set.servers)
}

// Lookup returns the server named name.
func (set *Set) Lookup(name string) (*Server, bool) {
	for _, s := range set.Servers() {
		if s.spec.Name == name {
			return s, true
		}
	}
	return nil, false
}

// Statuses returns every server's state, in order.
func (set *Set) Statuses() []Status {
	var out []Status
	for _, s := range set.Servers() {
		out = append(out, s.Status())
	}
	return out
}

// Tools returns the tools of every server that started, server by server
// in order; with resources set, ListMcpResourcesTool and
// ReadMcpResourceTool follow when a server offers resources.
func (set *Set) Tools(resources bool) []tool.Tool {
	var out []tool.Tool
	offers := false
	for _, s := range set.Servers() {
		out = append(out, s.Tools()...)
		offers = offers || s.offersResources()
	}
	if resources && offers {
		out = append(out, ResourceTools(set)...)
	}
	return out
}

// Close stops every server at once and waits for them all.
func (set *Set) Close() {
	var wg sync.WaitGroup
	for _, s := range set.Servers() {
		wg.Go(s.Close)
	}
	wg.Wait()
}
