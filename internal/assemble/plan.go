package assemble

import (
	"context"
	"io"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/flags"
	"github.com/cohort-dev/cohort/hook"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/remote"
	"github.com/cohort-dev/cohort/settings"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/teammate"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/tool/ask"
)

// Plan is a session as its program asked for it, grouped by the part that
// uses each value: package cohort makes it from its Config, the one
// translation of a Config. Resolve completes it from the settings files
// and the environment (the fields marked "resolved"), writing nothing;
// Open opens the parts it describes.
type Plan struct {
	Process     Process
	Session     SessionPlan
	Settings    SettingsPlan
	Model       ModelPlan
	Lead        LeadPlan
	Agents      AgentPlan
	Permissions PermissionPlan
	Tools       ToolPlan
	Hooks       HookPlan
	MCP         MCPPlan
	Team        TeamPlan
	Remote      RemotePlan
	Workflows   WorkflowPlan
	// Sandbox is "on", "off" or "" (the settings' sandbox.enabled).
	Sandbox string
	// Disposable: the directory is a remote job's clone, made for the
	// session and removed after it, whose git dir the sandbox leaves
	// writable so that the job's agent can commit
	// (sandbox.Config.Disposable).
	Disposable bool
	// Trace is the Chrome trace file to write ("" for none).
	Trace string
	// Events receives what the session's agents do.
	Events Sinks
}

// Process is where and how the session runs.
type Process struct {
	// Dir is the project directory ("" for the working directory); Home is
	// Cohort's state ("" for $COHORT_HOME, else ~/.cohort).
	Dir, Home string
	// Env are variables over the environment Getenv and Environ read.
	Env map[string]string
	// Getenv, Environ and Getwd read the process (nil: os's); Stderr
	// takes warnings (nil: os.Stderr).
	Getenv  func(string) string
	Environ func() []string
	Getwd   func() (string, error)
	Stderr  io.Writer
	// Verbose reports more on Stderr.
	Verbose bool
	// Version is Cohort's, as MCP servers are told it.
	Version string

	// Resolved: the absolute working directory, the user's and Cohort's
	// homes, the canonical repository root (the cwd outside git), whether
	// a .git entry is in the cwd or above it, and the project's directory
	// under Cohort's home.
	Cwd         string
	Paths       settings.Env
	ProjectRoot string
	InGit       bool
	ProjectDir  string
}

// SessionPlan is which session this is: a new one, one to resume or fork,
// or a teammate's.
type SessionPlan struct {
	Resume   string
	Continue bool
	// NewID is the id of a new session, or of the fork.
	NewID string
	Fork  bool
	// Teammate, when set, makes the session one member of a team.
	Teammate *Membership
	// StopAfterRun ends the session's other work before each result.
	StopAfterRun bool
	// AutoDream consolidates memory in the background after lead turns.
	AutoDream bool

	// Resolved: the session's id, and the session it forks (its
	// transcript is copied under ID by Open).
	ID, ForkFrom string
}

// Membership is a teammate session's place: its team and name, the lead's
// session id, and the batch of teammates spawned with it.
type Membership struct {
	Team, Name, LeadSession, Siblings string
}

// SettingsPlan is what is read beside the settings files.
type SettingsPlan struct {
	// Layers are more settings over the files: JSON text or file paths.
	Layers []string
	// Sources, when not nil, are the only scopes read.
	Sources []string
	// Flags set feature flags, "name=value" each.
	Flags []string

	// Resolved: the settings and the feature flags.
	Loaded *settings.Settings
	Set    *flags.Set
}

// ModelPlan is the lead's model and the providers agents reach.
type ModelPlan struct {
	// Spec is a model id, alias, provider/model or scripted:FILE ("": the
	// settings' "model", else sonnet); Provider the lead's provider.
	Spec, Provider string
	// BaseURL and APIKey reach the lead's provider.
	BaseURL, APIKey string
	// Fallback takes over when the lead's model is overloaded or missing.
	Fallback string
	// Betas go in the anthropic-beta header of every Anthropic request.
	Betas []string
}

// LeadPlan is how the lead works.
type LeadPlan struct {
	// Agent runs the lead as this agent type.
	Agent string
	// SystemPrompt replaces the default prompt; AppendSystemPrompt is added.
	SystemPrompt, AppendSystemPrompt string
	// Proactive appends a definition's prompt instead of replacing.
	Proactive bool
	// MaxTurns and MaxBudgetUSD stop the lead (0: no limit).
	MaxTurns     int
	MaxBudgetUSD float64
	// ThinkingTokens is the lead's thinking budget (0: off).
	ThinkingTokens int
	// JSONSchema is the schema the lead's final answer must match.
	JSONSchema string
}

// AgentPlan is the agent definitions and the limits every agent shares.
type AgentPlan struct {
	// Definitions are more definitions, as JSON text ({"name": {…}}).
	Definitions string
	// MaxConcurrent, MaxTurns, Timeout, MaxDepth and EvictAfter are
	// crew.Config's (0: its defaults).
	MaxConcurrent int
	MaxTurns      int
	Timeout       time.Duration
	MaxDepth      int
	EvictAfter    time.Duration

	// Resolved: the definitions loaded.
	Catalog *agentdef.Catalog
}

// PermissionPlan is the permission checks and who answers their prompts.
type PermissionPlan struct {
	// Mode is the permission mode ("": the settings' defaultMode).
	Mode permission.Mode
	// Allow and Deny are rules, each entry comma- or space-separated.
	Allow, Deny []string
	// AddDirs are more working directories.
	AddDirs []string
	// PromptCommand is a program that answers prompts.
	PromptCommand string
	// Ask, when set, answers every prompt of every agent.
	Ask func(ctx context.Context, p Prompt) (Answer, error)
}

// Prompt is a permission prompt as PermissionPlan.Ask gets it: the
// request, who asks (Asker), and what the sandbox makes of a Bash call:
// Unsandboxed when it runs outside the session's sandbox, Blocked the
// directories it would write that the sandbox keeps it from.
type Prompt struct {
	permission.PromptRequest
	Asker       tool.Caller
	Unsandboxed bool
	Blocked     []string
}

// AllowRules are the allow rules the checks suggest for the call, as
// written in settings.
func (p Prompt) AllowRules() []string {
	var out []string
	for _, u := range p.Suggestions {
		if u.Type == permission.UpdateAddRules && u.Behavior == permission.Allow {
			for _, v := range u.Rules {
				out = append(out, v.String())
			}
		}
	}
	return out
}

// Answer answers a Prompt: Always are allow rules to keep from now on,
// AllowWrite directories the sandbox lets commands write for the rest of
// the session.
type Answer struct {
	permission.PromptDecision
	Always, AllowWrite []string
}

// ToolPlan is the tools beside the built-in ones.
type ToolPlan struct {
	// Extra come after the built-in tools, in order.
	Extra []tool.Tool
	// Pool, when not nil, is the only tools there are ("Task" is Agent).
	Pool []string
	// AskUser, when set, answers AskUserQuestion (the tool is offered
	// only then).
	AskUser func(ctx context.Context, agentID string, qs []ask.Question) (map[string]string, error)
}

// HookPlan is the hooks beside the settings' ones.
type HookPlan struct {
	// Funcs run in the program, as hook commands do.
	Funcs *hook.Set
}

// MCPPlan is the MCP servers beside .mcp.json and the settings'.
type MCPPlan struct {
	// Configs are MCP configurations (JSON text or file paths); Strict
	// makes them the only ones.
	Configs []string
	Strict  bool
	// Transports are servers in the program, by name.
	Transports map[string]sdkmcp.Transport
}

// TeamPlan is where teammates run and how they reach the lead.
type TeamPlan struct {
	// Mode is auto, in-process or tmux ("": the settings' teammateMode,
	// else auto); Backends overrides it per teammate name.
	Mode     string
	Backends map[string]string
	// PermissionTimeout bounds a teammate's wait for the lead's answer.
	PermissionTimeout time.Duration
	// Command is the cohort binary that runs teammates in tmux panes (""
	// for $COHORT_TEAMMATE_BIN, else this executable).
	Command string
	// ApprovePlan, when set, decides teammates' plans instead of the lead
	// model.
	ApprovePlan func(ctx context.Context, name, color, plan string) (approve bool, feedback string, err error)
	// Configure encodes the configuration of a teammate process: what it
	// inherits from this session, and spec.
	Configure func(spec ChildSpec) ([]byte, error)
}

// RemotePlan connects the session to remote workers.
type RemotePlan struct {
	// NATS says where the queue is ("" URL: no remote agents); Queue tunes it.
	NATS  remote.Config
	Queue remote.Queue
	// KeyName names the lead's signing key on the workers.
	KeyName string
}

// WorkflowPlan is how workflow scripts run.
type WorkflowPlan struct {
	// Host is the cohort-workflow program ("" for $COHORT_WORKFLOW_HOST,
	// else found beside the executable or on PATH).
	Host string
	// Budget is each run's budget in dollars (0: none).
	Budget float64
}

// Sinks receive what the session's agents do, from many goroutines; they
// must not block.
type Sinks struct {
	Engine func(engine.Event)
	Task   func(task.Event)
	Team   func(teammate.Event)
}

// ChildSpec is what a teammate process gets besides what it inherits from
// the session: its place in the team, its model, Cohort's home and the
// variables of this session's environment it needs (credentials, feature
// flags; on a scripted model, what points each provider at this
// process's fake).
type ChildSpec struct {
	Member      Membership
	Model       string
	Scripted    bool
	Home, Cwd   string
	Environment map[string]string
}
