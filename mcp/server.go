package mcp

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server's states, as Claude Code reports them in system/init
// (mcp_servers[].status) and cohort mcp list shows them.
const (
	StateConnected  = "connected"
	StateFailed     = "failed"
	StateDisabled   = "disabled"   // not approved: never started
	StateRestarting = "restarting" // it exited; the one restart is under way
	StateClosed     = "closed"
)

// Defaults for Options' zero values.
const (
	DefaultStartTimeout = 30 * time.Second
	// crashWait bounds how long a call whose connection broke waits to
	// learn whether the process exited (a crash) or not.
	crashWait = 2 * time.Second
)

// Options are what every server of a session shares.
type Options struct {
	// StartTimeout bounds connecting, initializing and listing tools
	// (default 30 s; Claude Code's MCP_TIMEOUT).
	StartTimeout time.Duration
	// CallTimeout bounds one tool call (0: only the call's context;
	// Claude Code's MCP_TOOL_TIMEOUT).
	CallTimeout time.Duration
	// Dir is the working directory of stdio servers; Env their base
	// environment (the server's env entries are added to it).
	Dir string
	Env []string
	// Launch, when set, starts stdio servers' processes (the session's
	// sandbox; see Launch); nil runs them as Cohort's children.
	Launch Launch
	// Confined says the session has a sandbox, for the notices about
	// servers that opt out of it (Spec.SandboxNotice).
	Confined bool
	// Warn receives reports meant for the user: a server that failed to
	// start, crashed, was restarted, or offered a tool Cohort skips. It is
	// called from several goroutines. Nil drops them.
	Warn func(msg string)
	// Version is the client version sent in initialize.
	Version string
}

func (o Options) version() string {
	if o.Version == "" {
		return "dev"
	}
	return o.Version
}

func (o Options) startTimeout() time.Duration {
	if o.StartTimeout <= 0 {
		return DefaultStartTimeout
	}
	return o.StartTimeout
}

func (o Options) warn(format string, args ...any) {
	if o.Warn != nil {
		o.Warn(fmt.Sprintf(format, args...))
	}
}

// Server is one configured MCP server and its connection. A stdio server
// whose process exits is reported and restarted once; a second exit
// leaves it failed. Safe for concurrent use; Close may be called more than
// once.
type Server struct {
	spec Spec
	opts Options
	// ctx is the server's lifetime: its process and its one restart.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // the watcher

	mu       sync.Mutex
	state    string
	err      error
	cur      *link
	up       chan struct{} // closed when a restart has ended
	restarts int
	tools    []*sdk.Tool // as first listed; the pool keeps them
	resource bool        // the server offers resources
}

// Start connects to spec's server and lists its tools, within the start
// timeout. It always returns a Server: one that could not start is in
// state failed, with the error in Status. A disabled spec is not started.
func Start(ctx context.Context, spec Spec, o Options) *Server {
	s := &Server{spec: spec, opts: o}
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if spec.Disabled {
		s.state = StateDisabled
		return s
	}
	l, tools, err := s.connect(ctx)
	if err != nil {
		s.state, s.err = StateFailed, err
		return s
	}
	s.state, s.cur, s.tools = StateConnected, l, s.adapt(tools)
	caps := l.cs.InitializeResult().Capabilities
	s.resource = caps != nil && caps.Resources != nil
	s.wg.Add(1)
	go s.watch(l)
	return s
}

// connect dials and lists tools under the start timeout; on failure the
// process (if any) is stopped and the error says what happened.
func (s *Server) connect(ctx context.Context) (*link, []*sdk.Tool, error) {
	d := s.opts.startTimeout()
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	l, err := dial(ctx, s.ctx, s.spec, s.opts)
	if err != nil {
		return nil, nil, s.startErr(ctx, "initialize", err, l)
	}
	var tools []*sdk.Tool
	if caps := l.cs.InitializeResult().Capabilities; caps == nil || caps.Tools != nil {
		for t, err := range l.cs.Tools(ctx, nil) {
			if err != nil {
				l.close()
				return nil, nil, s.startErr(ctx, "tools/list", err, l)
			}
			tools = append(tools, t)
		}
	}
	return l, tools, nil
}

func (s *Server) startErr(ctx context.Context, step string, err error, l *link) error {
	tail := ""
	if t := l.stderrTail(); t != "" {
		tail = "; stderr: " + t
	}
	if ctx.Err() != nil && errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		return fmt.Errorf("MCP server %q did not answer %s within %s%s; it is not used — check that %s speaks MCP, or raise MCP_TIMEOUT (milliseconds)",
			s.spec.Name, step, s.opts.startTimeout(), tail, s.what())
	}
	return fmt.Errorf("MCP server %q: %s failed: %v%s", s.spec.Name, step, err, tail)
}

func (s *Server) what() string {
	switch s.spec.Type {
	case TypeHTTP:
		return s.spec.URL
	case TypeSDK:
		return "the host program's server " + s.spec.Name
	}
	return s.spec.Command
}

// watch waits for the link's process to exit; the first exit restarts
// the server, the second leaves it failed. It returns when the server is
// closed or failed.
func (s *Server) watch(l *link) {
	defer s.wg.Done()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-l.exited:
		}
		how := l.exitText()
		l.close()
		s.mu.Lock()
		if s.state == StateClosed {
			s.mu.Unlock()
			close(l.handled)
			return
		}
		restart := s.restarts == 0
		if restart {
			s.restarts++
			s.state, s.up = StateRestarting, make(chan struct{})
		} else {
			s.state, s.err = StateFailed, fmt.Errorf("MCP server %q exited again (%s); it is not restarted a second time", s.spec.Name, how)
		}
		close(l.handled)
		s.mu.Unlock()
		if !restart {
			s.opts.warn("%v; its tools fail until the session restarts", s.err)
			return
		}
		s.opts.warn("MCP server %q exited (%s); restarting it once", s.spec.Name, how)
		nl, _, err := s.connect(s.ctx)
		s.mu.Lock()
		if s.state == StateClosed {
			if nl != nil {
				s.cur = nl // Close closes it once the watcher is gone
			}
			close(s.up)
			s.up = nil
			s.mu.Unlock()
			return
		}
		if err != nil {
			s.state, s.err = StateFailed, fmt.Errorf("restart failed: %w", err)
		} else {
			s.state, s.cur = StateConnected, nl
		}
		close(s.up)
		s.up = nil
		s.mu.Unlock()
		if err != nil {
			s.opts.warn("MCP server %q: %v", s.spec.Name, s.err)
			return
		}
		l = nl
	}
}

// session returns the live connection, waiting for a restart under way.
func (s *Server) session(ctx context.Context) (*link, error) {
	for {
		s.mu.Lock()
		state, l, up, err := s.state, s.cur, s.up, s.err
		s.mu.Unlock()
		switch {
		case state == StateClosed:
			return nil, fmt.Errorf("MCP server %q is closed", s.spec.Name)
		case state == StateFailed:
			return nil, err
		case state == StateDisabled:
			return nil, fmt.Errorf("MCP server %q is not started: %s", s.spec.Name, s.spec.Reason)
		case up != nil:
			select {
			case <-up:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		select {
		case <-l.exited:
			select { // the watcher records it; wait for the new state
			case <-l.handled:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		default:
			return l, nil
		}
	}
}

// broke turns the error of a call on l into what the model reads: a
// server error as it is, a connection that broke as a crash once the
// process is seen to have exited.
func (s *Server) broke(ctx context.Context, l *link, err error) error {
	var wire *jsonrpc.Error
	if errors.As(err, &wire) || ctx.Err() != nil {
		return err
	}
	if l.exited != nil {
		t := time.NewTimer(crashWait)
		defer t.Stop()
		select {
		case <-l.exited:
			return fmt.Errorf("MCP server %q exited during the call (%s); it is restarted once, so the call may be tried again", s.spec.Name, l.exitText())
		case <-t.C:
		case <-ctx.Done():
		}
	}
	return err
}

// Name returns the server's configured name.
func (s *Server) Name() string { return s.spec.Name }

// Spec returns the server's configuration.
func (s *Server) Spec() Spec { return s.spec }

// Status is a server's state for listings: its tools' full names
// (mcp__server__tool), and why it failed or is disabled.
type Status struct {
	Name   string
	State  string
	Scope  string
	Source string
	Tools  []string
	Error  string
}

// Status returns the server's current state.
func (s *Server) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{Name: s.spec.Name, State: s.state, Scope: s.spec.Scope, Source: s.spec.Source}
	switch {
	case s.err != nil:
		st.Error = s.err.Error()
	case s.state == StateDisabled:
		st.Error = s.spec.Reason
	}
	for _, t := range s.tools {
		st.Tools = append(st.Tools, ToolName(s.spec.Name, t.Name))
	}
	return st
}

// Close stops the server: its process and watcher are gone when it
// returns. Calls in flight fail.
func (s *Server) Close() {
	s.mu.Lock()
	if s.state == StateClosed {
		s.mu.Unlock()
		return
	}
	s.state = StateClosed
	s.cancel()
	l := s.cur
	s.mu.Unlock()
	if l != nil {
		l.close()
	}
	s.wg.Wait()
	// A restart the cancel cut short closed its own link; one that won the
	// race is current now.
	s.mu.Lock()
	l2 := s.cur
	s.mu.Unlock()
	if l2 != nil && l2 != l {
		l2.close()
	}
}
