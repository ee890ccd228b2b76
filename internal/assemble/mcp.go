package assemble

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/internal/childenv"
	"github.com/cohort-dev/cohort/internal/proc"
	"github.com/cohort-dev/cohort/mcp"
	"github.com/cohort-dev/cohort/sandbox"
	"github.com/cohort-dev/cohort/tool"
)

// mcpSpecs are the session's servers (mcp.Load), problems reported.
func (b *Plan) mcpSpecs() []mcp.Spec {
	specs, errs := mcp.Load(b.mcpLoadConfig())
	for _, err := range errs {
		fmt.Fprintf(b.Process.Stderr, "cohort: warning: %v\n", err)
	}
	specs = b.mcpJudged(specs, func(msg string) { fmt.Fprintf(b.Process.Stderr, "cohort: warning: %s\n", msg) })
	for _, name := range slices.Sorted(maps.Keys(b.MCP.Transports)) {
		specs = slices.DeleteFunc(specs, func(s mcp.Spec) bool { return s.Name == name })
		specs = append(specs, mcp.Spec{Name: name, Type: mcp.TypeSDK, Transport: b.MCP.Transports[name],
			Scope: mcp.ScopeSDK, Source: "the program hosting the session"})
	}
	return specs
}

// mcpLoadConfig says where the session's servers are configured.
func (b *Plan) mcpLoadConfig() mcp.LoadConfig {
	dirs := []string{b.Process.ProjectRoot}
	if b.Process.Cwd != b.Process.ProjectRoot {
		dirs = append(dirs, b.Process.Cwd)
	}
	return mcp.LoadConfig{Settings: b.Settings.Loaded, ProjectDirs: dirs, CLI: b.MCP.Configs,
		Strict: b.MCP.Strict, Dir: b.Process.Cwd, Getenv: b.Process.Getenv, Trust: b.Process.Paths.Trust}
}

// mcpOptions are the options every server of the session shares:
// MCP_TIMEOUT and MCP_TOOL_TIMEOUT (milliseconds, Claude Code's
// variables), the session's directory and its environment without
// Cohort's credentials.
func (b *Plan) mcpOptions() mcp.Options {
	ms := func(name string) time.Duration {
		v := b.Process.Getenv(name)
		if v == "" {
			return 0
		}
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			fmt.Fprintf(b.Process.Stderr, "cohort: warning: %s=%q is not a positive number of milliseconds; ignored\n", name, v)
			return 0
		}
		return time.Duration(n) * time.Millisecond
	}
	stderr := b.Process.Stderr
	return mcp.Options{StartTimeout: ms("MCP_TIMEOUT"), CallTimeout: ms("MCP_TOOL_TIMEOUT"), Dir: b.Process.Cwd,
		Env:     append(childenv.Scrub(b.childEnviron()), b.settingsEnv()...),
		Warn:    func(msg string) { fmt.Fprintf(stderr, "cohort: warning: %s\n", msg) },
		Version: b.Process.Version}
}

// openMCP starts the session's MCP servers; they stop when it closes.
func (s *Session) openMCP(ctx context.Context) {
	// Even with no servers there is a set: the host may add some
	// (dynamic.go).
	s.mcp = mcp.StartAll(ctx, s.mcpSpecs(), s.serverOptions(s.Process.Cwd))
	s.closers = append(s.closers, s.mcp.Close)
}

// serverOptions are mcpOptions for servers the session starts in dir (an
// agent's working directory): confined by the session's sandbox in
// dir's writing profile (mcpLaunch).
func (s *Session) serverOptions(dir string) mcp.Options {
	o := s.mcpOptions()
	o.Dir, o.Launch, o.Confined = dir, serverLaunch(s.sandbox, s.reaper), s.sandbox != nil
	return o
}

// serverLaunch starts stdio servers (mcp.Launch): in sb, the writing
// profile of the server's directory, with the sandbox's TMPDIR and a
// private npm cache; a server that may opt out (mcp.Spec.Unconfined), and
// every server when sb is nil (no sandbox), through reaper, the
// unconfined launcher that kills what they leave when the session ends,
// as Bash commands then run (as Cohort's children when there is none).
// See "The sandbox" in package mcp.
func serverLaunch(sb, reaper *sandbox.Sandbox) mcp.Launch {
	return func(ctx context.Context, spec mcp.Spec, dir string, env []string) (proc.Launcher, []string, error) {
		if sb == nil || spec.Unconfined() {
			if reaper != nil {
				if l, err := reaper.Launcher(ctx, dir, sandbox.Writing); err == nil {
					return l, nil, nil
				}
			}
			return nil, nil, nil
		}
		l, err := sb.Launcher(ctx, dir, sandbox.Writing)
		if err != nil {
			return nil, nil, err
		}
		extra := sb.Env()
		if !setsNpmCache(env) {
			extra = append(extra, "npm_config_cache="+filepath.Join(sb.TempDir(), "mcp", spec.Scope+"-"+spec.Name, "npm"))
		}
		return l, extra, nil
	}
}

// setsNpmCache reports whether env, what a server gets (Cohort's, the
// settings' env, its own), names npm's cache already: the user's choice
// stands.
func setsNpmCache(env []string) bool {
	return slices.ContainsFunc(env, func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return strings.EqualFold(k, "npm_config_cache")
	})
}

// MCPServers are the session's MCP servers and their states now.
func (s *Session) MCPServers() []mcp.Status { return s.mcp.Statuses() }

// agentMCP connects the servers an agent definition names in mcpServers
// (crew.Config.Extras): a name refers to a server of the session, whose
// tools the agent then gets even if its tools list leaves them out; an
// inline configuration ({name: {command, …}}) is the agent's own
// connection, closed when the agent's run ends. Problems are warnings; the
// agent runs without those tools.
//
// Its own servers start in dir, the agent's working directory (its
// worktree for an isolated agent), confined as that agent's approved Bash
// commands are.
func (s *Session) agentMCP(ctx context.Context, def *agentdef.Definition, dir string) ([]tool.Tool, func()) {
	if def == nil || def.MCPServers == nil {
		return nil, nil
	}
	where := def.Source.Path
	var own []mcp.Spec
	var tools []tool.Tool
	add := func(name string, v any) {
		if v == nil {
			if srv, ok := s.mcp.Lookup(name); ok {
				tools = append(tools, srv.Tools()...)
			} else {
				fmt.Fprintf(s.Process.Stderr, "cohort: warning: %s: agent %q names MCP server %q, which the session does not have\n", where, def.Name, name)
			}
			return
		}
		spec, err := mcp.Decode(name, v, mcp.ScopeAgent, where, s.Process.Getenv)
		if err != nil {
			fmt.Fprintf(s.Process.Stderr, "cohort: warning: agent %q: %v\n", def.Name, err)
			return
		}
		own = append(own, spec)
	}
	switch v := def.MCPServers.(type) {
	case []any:
		for _, e := range v {
			switch e := e.(type) {
			case string:
				add(e, nil)
			case map[string]any:
				for _, n := range slices.Sorted(maps.Keys(e)) {
					add(n, e[n])
				}
			}
		}
	case map[string]any:
		for _, n := range slices.Sorted(maps.Keys(v)) {
			add(n, v[n])
		}
	}
	if len(own) == 0 {
		return tools, nil
	}
	set := mcp.StartAll(ctx, own, s.serverOptions(dir))
	return append(tools, set.Tools(false)...), set.Close
}

// agentExtras is crew.Config.Extras: the tools of a definition's own
// MCP servers and the skills it preloads.
func (s *Session) agentExtras(ctx context.Context, a *crew.Agent) crew.Extras {
	def := a.Def()
	dir := a.Info().Cwd
	if dir == "" {
		dir = s.Process.Cwd
	}
	tools, closeFn := s.agentMCP(ctx, def, dir)
	return crew.Extras{Tools: tools, Opening: s.preloadSkills(def), Close: closeFn}
}
