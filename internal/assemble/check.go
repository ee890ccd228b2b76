package assemble

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/mcp"
	"github.com/cohort-dev/cohort/settings"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/transcript"
)

// maxOutputTokens is the engine's output limit per response, which a
// thinking budget must stay below.
const maxOutputTokens = 32000

// Check rejects what is wrong in a Config itself (as its plan holds it),
// before anything is read or written; each error is a *FieldError naming
// the Config field. The Config's hooks are checked where they are made.
func Check(p *Plan) error {
	for _, check := range []func(*Plan) error{checkTeam, checkSession, checkLimits, checkParity, checkJSONSchema, checkMCP} {
		if err := check(p); err != nil {
			return err
		}
	}
	if p.Sandbox != "" && p.Sandbox != "on" && p.Sandbox != "off" {
		return fieldErr("Sandbox", "Config.Sandbox %q: want on or off", p.Sandbox)
	}
	return nil
}

func checkTeam(p *Plan) error {
	switch p.Team.Mode {
	case "", "auto", "in-process", "tmux":
	case "remote":
		if p.Remote.NATS.URL == "" {
			return fieldErr("TeammateMode", `Config.TeammateMode "remote" runs teammates on workers of a NATS server: give the session one (Config.Remote.NATS, or remote.nats in settings)`)
		}
	default:
		return fieldErr("TeammateMode", "Config.TeammateMode %q is not one of auto, in-process, tmux, remote", p.Team.Mode)
	}
	for name, b := range p.Team.Backends {
		if name == "" || (b != "in-process" && b != "tmux" && b != "remote") {
			return fieldErr("TeammateBackends", "Config.TeammateBackends %s=%s: want a teammate name and in-process, tmux or remote", name, b)
		}
		if b == "remote" && p.Remote.NATS.URL == "" {
			return fieldErr("TeammateBackends", "Config.TeammateBackends %s=remote runs the teammate on a worker of a NATS server: give the session one (Config.Remote.NATS, or remote.nats in settings)", name)
		}
	}
	if mate := p.Session.Teammate; mate != nil && (mate.Team == "" || mate.Name == "") {
		return fieldErr("Role", "a teammate role needs both Team and Name")
	}
	return nil
}

func checkSession(p *Plan) error {
	if p.Session.Resume != "" && p.Session.Continue {
		return fieldErr("Continue", "Config.Resume and Config.Continue cannot be used together: resume one session or continue the latest")
	}
	if p.Session.NewID != "" && !transcript.ValidID(p.Session.NewID) {
		return fieldErr("SessionID", "Config.SessionID %q is not a UUID (e.g. 0b6f6c2e-3b1a-4c8e-9d2f-5a7e1c4b9d10)", p.Session.NewID)
	}
	if p.Session.NewID != "" && (p.Session.Resume != "" || p.Session.Continue) && !p.Session.Fork {
		return fieldErr("SessionID", "a resumed session keeps its id; add Config.ForkSession to continue it under %s", p.Session.NewID)
	}
	if p.Session.Fork && p.Session.Resume == "" && !p.Session.Continue {
		return fieldErr("ForkSession", "fork which session? give Config.Resume (its id) or Config.Continue")
	}
	return nil
}

func checkLimits(p *Plan) error {
	if p.Lead.MaxTurns < 0 || p.Agents.MaxConcurrent < 0 || p.Lead.MaxBudgetUSD < 0 || p.Agents.MaxTurns < 0 || p.Agents.Timeout < 0 || p.Agents.MaxDepth < 0 {
		return fieldErr("MaxTurns", "the limits (Config.MaxTurns, Config.MaxBudgetUSD, Config.MaxConcurrentAgents, Config.AgentMaxTurns, Config.AgentTimeout, Config.MaxAgentDepth) must not be negative")
	}
	return nil
}

// checkParity checks the tools and the Config fields that mirror Claude
// Code's flags (tool pool, setting sources, thinking budget, fallback).
func checkParity(p *Plan) error {
	known := slices.Clone(agentdef.CohortTools)
	for _, t := range p.Tools.Extra {
		if t == nil {
			return fieldErr("Tools", "a tool is nil")
		}
		known = append(known, t.Def().Name)
	}
	for _, name := range p.Tools.Pool {
		if !slices.Contains(known, agentdef.CanonicalTool(name)) {
			return fieldErr("ToolPool", "Config.ToolPool: %q is not a tool; name some of %s, or \"\" for none", name, strings.Join(known, ", "))
		}
	}
	for _, src := range p.Settings.Sources {
		switch settings.Scope(src) {
		case settings.ScopeUser, settings.ScopeProject, settings.ScopeLocal:
		default:
			return fieldErr("SettingSources", "Config.SettingSources: %q is not one of user, project, local", src)
		}
	}
	if n := p.Lead.ThinkingTokens; n != 0 && (n < 1024 || n >= maxOutputTokens) {
		return fieldErr("MaxThinkingTokens", "Config.MaxThinkingTokens %d: a thinking budget is 1024 to %d tokens (below %d, the output limit; 0 turns thinking off)", n, maxOutputTokens-1, maxOutputTokens)
	}
	if p.Model.Fallback != "" && p.Model.Fallback == p.Model.Spec {
		return fieldErr("FallbackModel", "Config.FallbackModel %q is the same as Config.Model: the model itself cannot be its fallback; name another model", p.Model.Fallback)
	}
	return nil
}

// checkJSONSchema checks that JSONSchema is a schema the answers can be
// checked against.
func checkJSONSchema(p *Plan) error {
	if strings.TrimSpace(p.Lead.JSONSchema) == "" {
		return nil
	}
	if err := tool.CheckSchema(json.RawMessage(p.Lead.JSONSchema)); err != nil {
		return fieldErr("JSONSchema", "Config.JSONSchema is not a usable JSON schema: %v; give a JSON Schema object such as {\"type\": \"object\", \"properties\": {…}, \"required\": […]}", err)
	}
	return nil
}

// checkMCP reads the Config's MCP configurations, so that a missing file
// or broken JSON is an error before anything starts (problems in
// .mcp.json and settings are warnings instead).
func checkMCP(p *Plan) error {
	for name, t := range p.MCP.Transports {
		if !mcp.ValidName(name) {
			return fieldErr("MCPTransports", "server name %q: use only letters, digits, _ and - (at most 64)", name)
		}
		if t == nil {
			return fieldErr("MCPTransports", "server %q has no transport", name)
		}
	}
	for i, v := range p.MCP.Configs {
		if _, errs := mcp.ReadConfig(v, p.Process.Dir, nil); len(errs) > 0 {
			return fieldErr("MCPConfig", "Config.MCPConfig[%d]: %v", i, errors.Join(errs...))
		}
	}
	return nil
}
