package assemble

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cohort-dev/cohort/mcp"
	"github.com/cohort-dev/cohort/skill"
	"github.com/cohort-dev/cohort/tool"
)

// What the program hosting the session changes while it runs: its MCP
// servers (set, turned off and on, reconnected) and the skills read again
// from disk. Each change gives the session's own agent its new tools from
// its next request on (crew.ReplaceTools); agents running keep theirs.

// SetMCPServers makes configs (server name → Claude Code's configuration)
// and transports (servers in the host's own process, "type": "sdk") the
// host's servers, replacing those it set before; a configuration that
// cannot be read is reported in Errors and the rest apply.
func (s *Session) SetMCPServers(ctx context.Context, configs map[string]json.RawMessage, transports map[string]sdkmcp.Transport) mcp.Changes {
	bad := map[string]string{}
	var specs []mcp.Spec
	for _, name := range slices.Sorted(maps.Keys(configs)) {
		var v map[string]any
		if err := json.Unmarshal(configs[name], &v); err != nil {
			bad[name] = fmt.Sprintf("MCP server %q: the configuration is not a JSON object", name)
			continue
		}
		if v["type"] == mcp.TypeSDK {
			t := transports[name]
			if t == nil {
				bad[name] = fmt.Sprintf("MCP server %q is of type sdk, and the host serves no server of that name", name)
				continue
			}
			specs = append(specs, mcp.Spec{Name: name, Type: mcp.TypeSDK, Transport: t, Scope: mcp.ScopeSDK,
				Source: "the program hosting the session"})
			continue
		}
		spec, err := mcp.Decode(name, v, mcp.ScopeDynamic, "mcp_set_servers", s.Process.Getenv)
		if err != nil {
			bad[name] = err.Error()
			continue
		}
		specs = append(specs, spec)
	}
	ch := s.mcp.Replace(ctx, specs)
	maps.Copy(ch.Errors, bad)
	s.refreshTools()
	return ch
}

// ToggleMCP turns one of the session's MCP servers off or on again.
func (s *Session) ToggleMCP(ctx context.Context, name string, on bool) error {
	if err := s.mcp.Toggle(ctx, name, on); err != nil {
		return refused("%v", err)
	}
	s.refreshTools()
	return nil
}

// ReconnectMCP connects one of the session's MCP servers again.
func (s *Session) ReconnectMCP(ctx context.Context, name string) error {
	err := s.mcp.Reconnect(ctx, name)
	s.refreshTools()
	if err != nil {
		return refused("%v", err)
	}
	return nil
}

// ReloadSkills reads the skills directories again and returns the skills
// found; broken ones are warnings, as at start.
func (s *Session) ReloadSkills() []*skill.Skill {
	s.openSkills()
	s.refreshTools()
	return s.skills.Load().All()
}

// refreshTools replaces the MCP and Skill tools of the session's tools
// with those it has now.
func (s *Session) refreshTools() {
	if s.rt == nil {
		return
	}
	s.rt.ReplaceTools(s.MainAgent(), func(ts []tool.Tool) []tool.Tool {
		ts = slices.DeleteFunc(ts, func(t tool.Tool) bool {
			n := t.Def().Name
			return n == skill.ToolName || strings.HasPrefix(n, "mcp__") || n == mcp.ListResourcesName || n == mcp.ReadResourceName
		})
		ts = append(append(ts, s.skillTools()...), s.mcp.Tools(true)...)
		if s.checker != nil {
			ts = slices.DeleteFunc(ts, func(t tool.Tool) bool { return s.checker.DeniedWhole(t.Def().Name) })
		}
		return ts
	})
}
