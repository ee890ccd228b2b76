package mcp

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// ScopeDynamic is a server the session's host set while it runs
// (Set.Replace, the control protocol's mcp_set_servers).
const ScopeDynamic = "dynamic"

// Changes is what Replace did: the servers it started and stopped, and
// why each server that did not connect failed.
type Changes struct {
	Added   []string
	Removed []string
	Errors  map[string]string
}

// Replace makes specs the set's dynamic servers — those of scope dynamic
// or sdk, which the host manages — leaving the configured ones alone: a
// dynamic server not in specs is closed, one whose configuration changed
// is restarted, a new one started. A spec that names a configured server
// is refused (its configuration is the user's).
func (set *Set) Replace(ctx context.Context, specs []Spec) Changes {
	ch := Changes{Errors: map[string]string{}}
	want := map[string]Spec{}
	for _, sp := range specs {
		want[sp.Name] = sp
	}
	for _, s := range set.Servers() {
		name := s.spec.Name
		sp, named := want[name]
		switch {
		case !s.dynamic() && named:
			ch.Errors[name] = fmt.Sprintf("MCP server %q is configured in %s; a host cannot replace it", name, s.spec.Source)
			delete(want, name)
		case !s.dynamic():
		case !named:
			set.remove(name)
			ch.Removed = append(ch.Removed, name)
		case sp.Type != TypeSDK && fingerprint(sp) == fingerprint(s.spec):
			delete(want, name) // unchanged
		case sp.Type == TypeSDK && s.spec.Type == TypeSDK:
			delete(want, name) // the host's own server, still there
		}
	}
	for _, sp := range specs {
		if _, ok := want[sp.Name]; !ok {
			continue
		}
		srv := set.put(ctx, sp)
		ch.Added = append(ch.Added, sp.Name)
		if st := srv.Status(); st.State == StateFailed {
			ch.Errors[sp.Name] = st.Error
		}
	}
	return ch
}

// dynamic reports whether the host manages the server.
func (s *Server) dynamic() bool { return s.spec.Scope == ScopeDynamic || s.spec.Scope == ScopeSDK }

// Toggle turns a server off (closed, state disabled) or on again. A
// server disabled for want of the user's approval stays so.
func (set *Set) Toggle(ctx context.Context, name string, on bool) error {
	s, ok := set.Lookup(name)
	if !ok {
		return set.unknown(name)
	}
	set.mu.Lock()
	wasOff := set.off[name]
	set.mu.Unlock()
	st := s.Status()
	switch {
	case on && st.State == StateDisabled && !wasOff:
		return fmt.Errorf("MCP server %q is disabled: %s", name, st.Error)
	case on && !wasOff, !on && wasOff:
		return nil // as asked already
	}
	spec := s.spec
	spec.Disabled, spec.Reason = !on, ""
	if !on {
		spec.Reason = "turned off by the program hosting the session"
	}
	set.mu.Lock()
	set.off[name] = !on
	set.mu.Unlock()
	set.put(ctx, spec)
	return nil
}

// Reconnect closes a server's connection and connects again; the error
// says why it did not connect.
func (set *Set) Reconnect(ctx context.Context, name string) error {
	s, ok := set.Lookup(name)
	if !ok {
		return set.unknown(name)
	}
	if st := s.Status(); st.State == StateDisabled {
		return fmt.Errorf("MCP server %q is disabled: %s", name, st.Error)
	}
	if st := set.put(ctx, s.spec).Status(); st.State == StateFailed {
		return fmt.Errorf("MCP server %q did not reconnect: %s", name, st.Error)
	}
	return nil
}

func (set *Set) unknown(name string) error {
	var names []string
	for _, s := range set.Servers() {
		names = append(names, s.spec.Name)
	}
	if len(names) == 0 {
		return fmt.Errorf("no MCP server %q: the session has none", name)
	}
	return fmt.Errorf("no MCP server %q; the session's are %s", name, strings.Join(names, ", "))
}

// put starts spec's server in place of the one of that name (closed
// first), or after the others.
func (set *Set) put(ctx context.Context, spec Spec) *Server {
	if old, ok := set.Lookup(spec.Name); ok {
		old.Close()
	}
	srv := Start(ctx, spec, set.opts)
	set.mu.Lock()
	defer set.mu.Unlock()
	if i := slices.IndexFunc(set.servers, func(s *Server) bool { return s.spec.Name == spec.Name }); i >= 0 {
		set.servers[i] = srv
	} else {
		set.servers = append(set.servers, srv)
	}
	return srv
}

// remove closes and forgets the server named name.
func (set *Set) remove(name string) {
	s, ok := set.Lookup(name)
	if !ok {
		return
	}
	s.Close()
	set.mu.Lock()
	defer set.mu.Unlock()
	set.servers = slices.DeleteFunc(set.servers, func(x *Server) bool { return x == s })
	delete(set.off, name)
}
