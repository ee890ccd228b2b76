package cohort

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/hook"
	"github.com/cohort-dev/cohort/internal/assemble"
	"github.com/cohort-dev/cohort/mcp"
	"github.com/cohort-dev/cohort/settings"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/transcript"
)

// ConfigError is a Config that cannot work: Field names the Config field,
// and the message says what is wrong and what to do, naming the fields it
// speaks of as Config.Name (a front end may put its own names for them,
// as the command line puts its flags). New returns it before anything is
// written under Home.
type ConfigError struct {
	Field string
	Err   error
}

func (e *ConfigError) Error() string {
	msg := e.Err.Error()
	if strings.Contains(msg, "Config."+e.Field) {
		return msg
	}
	return fmt.Sprintf("%s (Config.%s)", msg, e.Field)
}

func (e *ConfigError) Unwrap() error { return e.Err }

func configErr(field, format string, args ...any) error {
	return &ConfigError{Field: field, Err: fmt.Errorf(format, args...)}
}

// configError is err as a ConfigError when the session's assembly found
// the Config at fault.
func configError(err error) error {
	var fe *assemble.FieldError
	if errors.As(err, &fe) {
		return &ConfigError{Field: fe.Field, Err: fe.Err}
	}
	return err
}

// maxOutputTokens is the engine's output limit per response, which a
// thinking budget must stay below.
const maxOutputTokens = 32000

// check rejects what is wrong in the Config itself, before anything is
// read or written. It is the one check of a Config: the command line
// relies on it for the flags it parses into one.
func (c Config) check() error {
	for _, check := range []func() error{c.checkTeam, c.checkSession, c.checkLimits, c.checkParity,
		c.checkJSONSchema, c.checkMCP, func() error { _, err := c.hookSet(); return err }} {
		if err := check(); err != nil {
			return err
		}
	}
	if c.Sandbox != "" && c.Sandbox != "on" && c.Sandbox != "off" {
		return configErr("Sandbox", "Config.Sandbox %q: want on or off", c.Sandbox)
	}
	return nil
}

func (c Config) checkTeam() error {
	switch c.TeammateMode {
	case "", "auto", "in-process", "tmux":
	default:
		return configErr("TeammateMode", "Config.TeammateMode %q is not one of auto, in-process, tmux", c.TeammateMode)
	}
	for name, b := range c.TeammateBackends {
		if name == "" || (b != "in-process" && b != "tmux") {
			return configErr("TeammateBackends", "Config.TeammateBackends %s=%s: want a teammate name and in-process or tmux", name, b)
		}
	}
	if c.Role.IsTeammate() && (c.Role.Team == "" || c.Role.Name == "") {
		return configErr("Role", "a teammate role needs both Team and Name")
	}
	return nil
}

func (c Config) checkSession() error {
	if c.Resume != "" && c.Continue {
		return configErr("Continue", "Config.Resume and Config.Continue cannot be used together: resume one session or continue the latest")
	}
	if c.SessionID != "" && !transcript.ValidID(c.SessionID) {
		return configErr("SessionID", "Config.SessionID %q is not a UUID (e.g. 0b6f6c2e-3b1a-4c8e-9d2f-5a7e1c4b9d10)", c.SessionID)
	}
	if c.SessionID != "" && (c.Resume != "" || c.Continue) && !c.ForkSession {
		return configErr("SessionID", "a resumed session keeps its id; add Config.ForkSession to continue it under %s", c.SessionID)
	}
	if c.ForkSession && c.Resume == "" && !c.Continue {
		return configErr("ForkSession", "fork which session? give Config.Resume (its id) or Config.Continue")
	}
	return nil
}

func (c Config) checkLimits() error {
	if c.MaxTurns < 0 || c.MaxConcurrentAgents < 0 || c.MaxBudgetUSD < 0 || c.AgentMaxTurns < 0 || c.AgentTimeout < 0 || c.MaxAgentDepth < 0 {
		return configErr("MaxTurns", "the limits (Config.MaxTurns, Config.MaxBudgetUSD, Config.MaxConcurrentAgents, Config.AgentMaxTurns, Config.AgentTimeout, Config.MaxAgentDepth) must not be negative")
	}
	return nil
}

// checkParity checks the tools and the Config fields that mirror Claude
// Code's flags (tool pool, setting sources, thinking budget, fallback).
func (c Config) checkParity() error {
	known := slices.Clone(agentdef.CohortTools)
	for _, t := range c.Tools {
		if t == nil {
			return configErr("Tools", "a tool is nil")
		}
		known = append(known, t.Def().Name)
	}
	for _, name := range c.ToolPool {
		if !slices.Contains(known, agentdef.CanonicalTool(name)) {
			return configErr("ToolPool", "Config.ToolPool: %q is not a tool; name some of %s, or \"\" for none", name, strings.Join(known, ", "))
		}
	}
	for _, src := range c.SettingSources {
		switch settings.Scope(src) {
		case settings.ScopeUser, settings.ScopeProject, settings.ScopeLocal:
		default:
			return configErr("SettingSources", "Config.SettingSources: %q is not one of user, project, local", src)
		}
	}
	if n := c.MaxThinkingTokens; n != 0 && (n < 1024 || n >= maxOutputTokens) {
		return configErr("MaxThinkingTokens", "Config.MaxThinkingTokens %d: a thinking budget is 1024 to %d tokens (below %d, the output limit; 0 turns thinking off)", n, maxOutputTokens-1, maxOutputTokens)
	}
	if c.FallbackModel != "" && c.FallbackModel == c.Model {
		return configErr("FallbackModel", "Config.FallbackModel %q is the same as Config.Model: the model itself cannot be its fallback; name another model", c.FallbackModel)
	}
	return nil
}

// checkJSONSchema checks that JSONSchema is a schema the answers can be
// checked against.
func (c Config) checkJSONSchema() error {
	if strings.TrimSpace(c.JSONSchema) == "" {
		return nil
	}
	if err := tool.CheckSchema(json.RawMessage(c.JSONSchema)); err != nil {
		return configErr("JSONSchema", "Config.JSONSchema is not a usable JSON schema: %v; give a JSON Schema object such as {\"type\": \"object\", \"properties\": {…}, \"required\": […]}", err)
	}
	return nil
}

// checkMCP reads the Config's MCP configurations, so that a missing file
// or broken JSON is an error before anything starts (problems in
// .mcp.json and settings are warnings instead).
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
		if _, errs := mcp.ReadConfig(v, c.Dir, nil); len(errs) > 0 {
			return configErr("MCPConfig", "Config.MCPConfig[%d]: %v", i, errors.Join(errs...))
		}
	}
	return nil
}

// hookSet converts the Config's hooks.
func (c Config) hookSet() (*hook.Set, error) {
	if len(c.Hooks) == 0 {
		return nil, nil
	}
	hs := make([]hook.FuncHook, len(c.Hooks))
	for i, h := range c.Hooks {
		fn := h.Func
		var f hook.Func
		if fn != nil {
			f = func(ctx context.Context, in []byte) ([]byte, error) { return fn(ctx, in) }
		}
		hs[i] = hook.FuncHook{Event: hook.Event(h.Event), Matcher: h.Matcher, Func: f, Timeout: h.Timeout}
	}
	set, err := hook.FromFuncs(hs)
	if err != nil {
		return nil, &ConfigError{Field: "Hooks", Err: err}
	}
	return set, nil
}
