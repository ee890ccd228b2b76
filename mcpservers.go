package cohort

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/internal/childenv"
	"github.com/cohort-dev/cohort/mcp"
	"github.com/cohort-dev/cohort/tool"
)

// MCPServer is one MCP server of the session as system/init lists it
// (mcp_servers: [{name, status}], Claude Code's shape) and cohort mcp list
// shows it: its state (connected, failed, disabled, …), where it is
// configured, its tools and why it failed or is disabled.
type MCPServer struct {
	Name   string   `json:"name"`
	Status string   `json:"status"`
	Scope  string   `json:"-"`
	Source string   `json:"-"`
	Tools  []string `json:"-"`
	Error  string   `json:"-"`
}

// checkMCP reads the Config's MCP configurations, so that a missing file or
// broken JSON given on the command line is an error before anything
// starts (problems in .mcp.json and settings are warnings instead).
func (c Config) checkMCP() error {
	for name, t := range c.MCPTransports {
		if !mcp.ValidName(name) {
			return configErr("MCPTransports", "server name %q: use only letters, digits, _ and - (at most 64)", name)
		}
		if t == nil {
			return configErr("MCPTransports", "server %q has no transport", name)
		}
	}
	for i, v := range c.MCPConfig {
		if err := CheckMCPConfig(v, c.Dir); err != nil {
			return configErr("MCPConfig", "MCPConfig[%d]: %v", i, err)
		}
	}
	return nil
}

// CheckMCPConfig reads one MCP configuration as Config.MCPConfig takes it
// (JSON text, or file paths relative to dir) and reports what is wrong
// with it: a missing file, broken JSON, a server that cannot work.
func CheckMCPConfig(v, dir string) error {
	if _, errs := mcp.ReadConfig(v, dir, nil); len(errs) > 0 {
		return errors.Join(errs...)
	}
	return nil
}

// mcpSpecs are the session's servers (mcp.Load), problems reported.
func (b *base) mcpSpecs() []mcp.Spec {
	dirs := []string{b.projectRoot}
	if b.cwd != b.projectRoot {
		dirs = append(dirs, b.cwd)
	}
	specs, errs := mcp.Load(mcp.LoadConfig{Settings: b.settings, ProjectDirs: dirs, CLI: b.o.mcpConfigs,
		Strict: b.o.strictMCP, Dir: b.cwd, Getenv: b.inv.Getenv})
	for _, err := range errs {
		fmt.Fprintf(b.inv.Stderr, "cohort: warning: %v\n", err)
	}
	for _, name := range slices.Sorted(maps.Keys(b.o.mcpTransports)) {
		specs = slices.DeleteFunc(specs, func(s mcp.Spec) bool { return s.Name == name })
		specs = append(specs, mcp.Spec{Name: name, Type: mcp.TypeSDK, Transport: b.o.mcpTransports[name],
			Scope: mcp.ScopeSDK, Source: "the program hosting the session"})
	}
	return specs
}

// mcpOptions are the options every server of the session shares:
// MCP_TIMEOUT and MCP_TOOL_TIMEOUT (milliseconds, Claude Code's
// variables), the session's directory and its environment without
// Cohort's credentials.
func (b *base) mcpOptions() mcp.Options {
	ms := func(name string) time.Duration {
		v := b.inv.Getenv(name)
		if v == "" {
			return 0
		}
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			fmt.Fprintf(b.inv.Stderr, "cohort: warning: %s=%q is not a positive number of milliseconds; ignored\n", name, v)
			return 0
		}
		return time.Duration(n) * time.Millisecond
	}
	stderr := b.inv.Stderr
	return mcp.Options{StartTimeout: ms("MCP_TIMEOUT"), CallTimeout: ms("MCP_TOOL_TIMEOUT"), Dir: b.cwd,
		Env:     append(childenv.Scrub(b.inv.Environ()), b.settingsEnv()...),
		Warn:    func(msg string) { fmt.Fprintf(stderr, "cohort: warning: %s\n", msg) },
		Version: Version()}
}

// openMCP starts the session's MCP servers; they stop when it closes.
func (s *Session) openMCP(ctx context.Context) {
	specs := s.mcpSpecs()
	if len(specs) == 0 {
		return
	}
	s.mcp = mcp.StartAll(ctx, specs, s.mcpOptions())
	s.closers = append(s.closers, s.mcp.Close)
}

// mcpServers lists the session's servers for system/init.
func (s *Session) mcpServers() []MCPServer {
	out := []MCPServer{}
	for _, st := range s.mcp.Statuses() {
		out = append(out, MCPServer{Name: st.Name, Status: st.State, Scope: st.Scope, Source: st.Source, Tools: st.Tools, Error: st.Error})
	}
	return out
}

// agentMCP connects the servers an agent definition names in mcpServers
// (crew.Config.Extras): a name refers to a server of the session, whose
// tools the agent then gets even if its tools list leaves them out; an
// inline configuration ({name: {command, …}}) is the agent's own
// connection, closed when the agent's run ends. Problems are warnings; the
// agent runs without those tools.
func (s *Session) agentMCP(ctx context.Context, def *agentdef.Definition) ([]tool.Tool, func()) {
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
				fmt.Fprintf(s.inv.Stderr, "cohort: warning: %s: agent %q names MCP server %q, which the session does not have\n", where, def.Name, name)
			}
			return
		}
		spec, err := mcp.Decode(name, v, mcp.ScopeAgent, where, s.inv.Getenv)
		if err != nil {
			fmt.Fprintf(s.inv.Stderr, "cohort: warning: agent %q: %v\n", def.Name, err)
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
	set := mcp.StartAll(ctx, own, s.mcpOptions())
	return append(tools, set.Tools(false)...), set.Close
}

// agentExtras is crew.Config.Extras: the tools of a definition's own
// MCP servers and the skills it preloads.
func (s *Session) agentExtras(ctx context.Context, a *crew.Agent) crew.Extras {
	def := a.Def()
	tools, closeFn := s.agentMCP(ctx, def)
	return crew.Extras{Tools: tools, Opening: s.preloadSkills(def), Close: closeFn}
}

// ListMCP writes the MCP servers a session with cfg would have, connecting
// to each approved one: its state, where it is configured and its tools
// (cohort mcp list).
func ListMCP(ctx context.Context, cfg Config, w io.Writer) error {
	if err := cfg.checkMCP(); err != nil {
		return err
	}
	b, err := loadBase(ctx, cfg.invocation(), cfg.options())
	if err != nil {
		return err
	}
	specs := b.mcpSpecs()
	if len(specs) == 0 {
		fmt.Fprintln(w, "No MCP servers are configured (.mcp.json, settings mcpServers, --mcp-config).")
		return nil
	}
	o := b.mcpOptions()
	o.Warn = nil // the listing says it all
	set := mcp.StartAll(ctx, specs, o)
	defer set.Close()
	for _, st := range set.Statuses() {
		fmt.Fprintf(w, "%s: %s (%s, %s)\n", st.Name, st.State, st.Scope, st.Source)
		if st.Error != "" {
			fmt.Fprintf(w, "  %s\n", st.Error)
		}
		for _, t := range st.Tools {
			fmt.Fprintf(w, "  %s\n", t)
		}
	}
	return nil
}

// ApproveMCP records that the user approved the project's MCP servers
// names (cohort mcp approve), and says where.
func ApproveMCP(ctx context.Context, cfg Config, names []string, w io.Writer) error {
	b, err := loadBase(ctx, cfg.invocation(), cfg.options())
	if err != nil {
		return err
	}
	known := map[string]mcp.Spec{}
	for _, s := range b.mcpSpecs() {
		if s.Scope == mcp.ScopeProject {
			known[s.Name] = s
		}
	}
	var specs []mcp.Spec
	for _, n := range names {
		s, ok := known[n]
		if !ok {
			return configErr("MCPConfig", "%q is not a project MCP server (.mcp.json); the project servers are: %s", n, strings.Join(slices.Sorted(maps.Keys(known)), ", "))
		}
		specs = append(specs, s)
	}
	path, err := mcp.Approve(ctx, b.projectRoot, specs)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "Approved %s (recorded in %s).\n", strings.Join(names, ", "), path)
	return nil
}
