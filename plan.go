package cohort

import (
	"context"
	"encoding/json"

	"github.com/cohort-dev/cohort/internal/assemble"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/remote"
)

// plan is the Config as the session's assembly takes it: each value
// grouped with the part that uses it. It is the one translation of a
// Config; everything below reads the plan. The callbacks are adapted to
// the parts' own types here too. The hooks were checked by check.
func (c Config) plan() *assemble.Plan {
	p := &assemble.Plan{
		Process: assemble.Process{Dir: c.Dir, Home: c.Home, Env: c.Env, Getenv: c.Getenv, Environ: c.Environ,
			Stderr: c.Stderr, Verbose: c.Verbose, Version: Version()},
		Session: assemble.SessionPlan{Resume: c.Resume, Continue: c.Continue, NewID: c.SessionID, Fork: c.ForkSession,
			StopAfterRun: c.StopAfterRun, AutoDream: c.AutoDream},
		Settings: assemble.SettingsPlan{Layers: c.Settings, Sources: c.SettingSources, Flags: c.Flags},
		Model: assemble.ModelPlan{Spec: c.Model, Provider: c.Provider, BaseURL: c.BaseURL, APIKey: c.APIKey,
			Fallback: c.FallbackModel, Betas: c.Betas},
		Lead: assemble.LeadPlan{Agent: c.Agent, SystemPrompt: c.SystemPrompt, AppendSystemPrompt: c.AppendSystemPrompt,
			Proactive: c.Proactive, MaxTurns: c.MaxTurns, MaxBudgetUSD: c.MaxBudgetUSD,
			ThinkingTokens: c.MaxThinkingTokens, JSONSchema: c.JSONSchema},
		Agents: assemble.AgentPlan{Definitions: c.Agents, MaxConcurrent: c.MaxConcurrentAgents, MaxTurns: c.AgentMaxTurns,
			Timeout: c.AgentTimeout, MaxDepth: c.MaxAgentDepth, EvictAfter: c.EvictAfter},
		Permissions: assemble.PermissionPlan{Mode: permission.Mode(c.PermissionMode), Allow: c.AllowedTools,
			Deny: c.DisallowedTools, AddDirs: c.AddDirs, PromptCommand: c.PermissionPromptCommand, Ask: c.askPermission()},
		Tools: assemble.ToolPlan{Extra: c.Tools, Pool: c.ToolPool},
		MCP:   assemble.MCPPlan{Configs: c.MCPConfig, Strict: c.StrictMCPConfig, Transports: c.MCPTransports},
		Team: assemble.TeamPlan{Mode: c.TeammateMode, Backends: c.TeammateBackends,
			PermissionTimeout: c.TeammatePermissionTimeout, Command: c.TeammateCommand, Configure: c.teammateConfig},
		Remote: assemble.RemotePlan{KeyName: c.Remote.KeyName,
			NATS: remote.Config{URL: c.Remote.NATS, Prefix: c.Remote.Prefix, Credentials: c.Remote.Credentials,
				TLSCA: c.Remote.TLSCA, TLSCert: c.Remote.TLSCert, TLSKey: c.Remote.TLSKey},
			Queue: remote.Queue{AckWait: c.Remote.AckWait, MaxDeliver: c.Remote.MaxDeliver}},
		Workflows: assemble.WorkflowPlan{Host: c.WorkflowHost, Budget: c.MaxBudgetUSD},
		Sandbox:   c.Sandbox,
		Trace:     c.Trace,
	}
	p.Hooks.Funcs, _ = c.hookSet()
	if c.Role.IsTeammate() {
		p.Session.Teammate = &assemble.Membership{Team: c.Role.Team, Name: c.Role.Name, LeadSession: c.Role.Session,
			Siblings: c.Role.Siblings}
	}
	if ask := c.AskUser; ask != nil {
		p.Tools.AskUser = func(ctx context.Context, agentID string, qs []Question) (map[string]string, error) {
			return ask(ctx, AskRequest{AgentID: agentID, Questions: qs})
		}
	}
	if approve := c.ApprovePlan; approve != nil {
		p.Team.ApprovePlan = func(ctx context.Context, name, color, plan string) (bool, string, error) {
			d, err := approve(ctx, PlanRequest{AgentName: name, Color: color, Plan: plan})
			return d.Approve, d.Feedback, err
		}
	}
	return p
}

// askPermission adapts CanUseTool to the permission prompts of every agent:
// the request names the asking agent and says what the sandbox makes of
// the call; the rules an answer allows always are kept for the session.
func (c Config) askPermission() func(context.Context, assemble.Prompt) (assemble.Answer, error) {
	canUse := c.CanUseTool
	if canUse == nil {
		return nil
	}
	return func(ctx context.Context, p assemble.Prompt) (assemble.Answer, error) {
		who := p.Asker
		d, err := canUse(ctx, PermissionRequest{Tool: p.ToolName, Input: p.Input, ToolUseID: p.ToolUseID, Reason: p.Reason,
			AgentID: who.ID, AgentName: who.Name, AgentKind: string(who.Kind), AgentType: who.Type, Color: who.Color,
			Suggestions: p.AllowRules(), Unsandboxed: p.Unsandboxed, Blocked: p.Blocked})
		return assemble.Answer{PromptDecision: permission.PromptDecision{Allow: d.Allow, Message: d.Message, UpdatedInput: d.UpdatedInput, NoPerson: d.NoPerson},
			Always: d.AlwaysAllow, AllowWrite: d.AllowWrite}, err
	}
}

// teammateConfig is the configuration a teammate process of this session
// gets, encoded (the document `cohort teammate FILE` reads): the Config
// fields a teammate inherits from its lead, and its place, model, home,
// directory and environment. The rest stays the lead's own: what it
// resumes, what it traces and prints, its prompts, limits and callbacks.
func (c Config) teammateConfig(spec assemble.ChildSpec) ([]byte, error) {
	child := Config{
		Dir: spec.Cwd, Home: spec.Home, Model: spec.Model, Provider: c.Provider, BaseURL: c.BaseURL, APIKey: c.APIKey,
		PermissionMode: c.PermissionMode, AllowedTools: c.AllowedTools, DisallowedTools: c.DisallowedTools,
		AddDirs: c.AddDirs, Flags: c.Flags, ToolPool: c.ToolPool, SettingSources: c.SettingSources,
		FallbackModel: c.FallbackModel, Betas: c.Betas, Verbose: c.Verbose, Env: spec.Environment,
		Role: Role{Team: spec.Member.Team, Name: spec.Member.Name, Session: spec.Member.LeadSession, Siblings: spec.Member.Siblings},
	}
	if spec.Scripted {
		// The teammate reaches the lead's scripted model through the
		// addresses in its environment.
		child.BaseURL, child.APIKey = "", ""
	}
	return json.Marshal(child)
}
