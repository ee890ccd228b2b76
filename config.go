package cohort

import (
	"context"
	"encoding/json"
	"io"
	"iter"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/tool/ask"
)

// Config describes a session. The zero value is a session in the process's
// working directory on Claude Sonnet, configured from the environment and
// the settings files the way the cohort command line is: every field left
// empty means what the command line's default means.
type Config struct {
	// Dir is the project directory (default: the process's working
	// directory). It must exist.
	Dir string `json:"dir,omitempty"`
	// Home is where Cohort keeps its state (default $COHORT_HOME, else
	// ~/.cohort).
	Home string `json:"home,omitempty"`

	// Model is a model id or alias (opus, sonnet, haiku), provider/model
	// (openai/qwen3), or scripted:FILE for a scripted model that needs no
	// key (llm/fakeapi's script format). Default: the settings' "model",
	// else sonnet.
	Model string `json:"model,omitempty"`
	// Provider is the lead's provider: anthropic (default), openai (chat
	// completions) or openai-responses.
	Provider string `json:"provider,omitempty"`
	// BaseURL points the lead's provider at a proxy or a local server.
	BaseURL string `json:"baseURL,omitempty"`
	// APIKey is the provider's key (default ANTHROPIC_API_KEY or
	// ANTHROPIC_AUTH_TOKEN, OPENAI_API_KEY for the OpenAI providers).
	APIKey string `json:"apiKey,omitempty"`

	// WorkflowHost is the cohort-workflow program that runs workflow
	// scripts (default: next to the running executable, else on PATH).
	WorkflowHost string `json:"workflowHost,omitempty"`

	// PermissionMode is default, acceptEdits, plan, dontAsk or
	// bypassPermissions (default: the settings' defaultMode, else default).
	PermissionMode string `json:"permissionMode,omitempty"`
	// AllowedTools and DisallowedTools add allow and deny rules
	// ("Bash(git diff:*)", "Edit"), like --allowedTools.
	AllowedTools    []string `json:"allowedTools,omitempty"`
	DisallowedTools []string `json:"disallowedTools,omitempty"`
	// AddDirs are more working directories the agents may write in.
	AddDirs []string `json:"addDirs,omitempty"`
	// PermissionPromptCommand names a program that answers permission
	// prompts (JSON on stdin and stdout), as --permission-prompt-command.
	PermissionPromptCommand string `json:"permissionPromptCommand,omitempty"`
	// CanUseTool, when set, answers every permission prompt of every agent
	// of the session (it runs after the PermissionRequest hooks and before
	// PermissionPromptCommand, which it replaces). It is called from many
	// goroutines at once.
	CanUseTool func(ctx context.Context, req PermissionRequest) (Decision, error) `json:"-"`
	// Wake, when set, lets another session's message start a turn of the idle lead: the session calls Wake, from a goroutine of its own, with that
	// Run (on what waits; ErrBusy at once, and no turn, when a Run began first or has already read it), which Wake reads to its end. Unset: it waits for the next Run.
	Wake func(run iter.Seq2[Event, error]) `json:"-"`

	// Hooks run in this program, beside the settings' hook commands, with
	// the same input and answers (Claude Code's hook JSON): for the SDK's
	// host-side hooks and embedding programs.
	Hooks []Hook `json:"-"`

	// AskUser, when set, answers the lead's AskUserQuestion calls (the tool
	// is offered only then): the questions, the answers keyed by question
	// text. It may block until the user answers or ctx ends.
	AskUser func(ctx context.Context, req AskRequest) (map[string]string, error) `json:"-"`

	// ApprovePlan, when set, decides the plans of teammates that must have
	// theirs approved (planModeRequired, Agent's mode "plan") instead of
	// the lead model: a person at a terminal UI. An error leaves the plan
	// to the lead model. It is called from many goroutines at once.
	ApprovePlan func(ctx context.Context, req PlanRequest) (PlanDecision, error) `json:"-"`

	// SystemPrompt replaces the default system prompt; AppendSystemPrompt
	// is added to it.
	SystemPrompt       string `json:"systemPrompt,omitempty"`
	AppendSystemPrompt string `json:"appendSystemPrompt,omitempty"`
	// Agent runs the lead as this agent type.
	Agent string `json:"agent,omitempty"`
	// Agents adds agent definitions, as JSON in the format of --agents:
	// {"name": {"description": …, "prompt": …, "tools": […]}}.
	Agents string `json:"agents,omitempty"`
	// Flags set feature flags, "name=value" each (see cohort flags).
	Flags []string `json:"flags,omitempty"`
	// Settings are more settings layers over the settings files, later
	// ones winning: each a JSON object, or the path of a settings file (as
	// --settings).
	Settings []string `json:"settings,omitempty"`
	// Proactive appends an agent definition's prompt to the default system
	// prompt instead of replacing it.
	Proactive bool `json:"proactive,omitempty"`
	// MCPConfig are more MCP server configurations, as --mcp-config: each
	// JSON text {"mcpServers": {name: {command, args, env} | {type: "http",
	// url, headers}}}, or the paths of such files (space-separated). They
	// count as approved. StrictMCPConfig makes them the only servers
	// (.mcp.json and the settings' mcpServers are not read).
	MCPConfig       []string `json:"mcpConfig,omitempty"`
	StrictMCPConfig bool     `json:"strictMCPConfig,omitempty"`
	// MCPTransports are MCP servers in this program, by name, reached
	// through any go-sdk transport (mcp.NewInMemoryTransports for a server
	// of the program's own; the Agent SDK host's servers over the control
	// protocol). Their tools are mcp__<name>__<tool> like any server's,
	// and they count as approved.
	MCPTransports map[string]sdkmcp.Transport `json:"-"`
	// Tools are more tools for every agent of the session; they come after
	// the built-in tools, in this order (the order is part of the cached
	// prompt).
	Tools []tool.Tool `json:"-"`
	// ToolPool, when not nil, is the only tools the session's agents have
	// (Claude Code's --tools): names of built-in tools or of Tools, "Task"
	// read as "Agent"; an empty, non-nil list leaves no tools at all. It is
	// a filter, unlike AllowedTools, which pre-approves calls.
	ToolPool []string `json:"toolPool"`
	// SettingSources, when not nil, are the only settings files read, by
	// scope: "user", "project", "local" (Claude Code's --setting-sources).
	// Settings layers are applied whatever it says.
	SettingSources []string `json:"settingSources"`
	// MaxThinkingTokens turns on extended thinking for the lead with this
	// budget (at least 1024, below the 32000 output tokens; 0: off).
	MaxThinkingTokens int `json:"maxThinkingTokens,omitempty"`
	// FallbackModel takes over the requests for the lead's model when that
	// model is overloaded or does not exist (llm.Fallback), for the rest of
	// the session.
	FallbackModel string `json:"fallbackModel,omitempty"`
	// Betas are sent in the anthropic-beta header of Anthropic requests.
	Betas []string `json:"betas,omitempty"`
	// JSONSchema, when set, is a JSON schema the lead's final answer must
	// match (Claude Code's --json-schema): the prompt says so, an answer
	// that does not match is sent back with what is wrong (five answers at
	// most, then the Run fails with StopStructuredOutputRetries), and the
	// result carries the answer as StructuredOutput.
	JSONSchema string `json:"jsonSchema,omitempty"`

	// Resume continues the session with this id; Continue the most recent
	// session of the project.
	Resume   string `json:"resume,omitempty"`
	Continue bool   `json:"continue,omitempty"`
	// SessionID is the id of a new session (a UUID, not yet used in the
	// project) instead of a fresh one; with ForkSession, the fork's id.
	SessionID string `json:"sessionID,omitempty"`
	// ForkSession, with Resume or Continue, continues in a new session: a
	// copy of the resumed transcript under a new id (SessionID, else a
	// fresh one), leaving the original as it was.
	ForkSession bool `json:"forkSession,omitempty"`
	// Role makes the session a teammate of a team instead of a lead (what
	// `cohort teammate` runs); Run then runs it until it is shut down.
	Role Role `json:"role,omitempty"`

	// MaxTurns stops the lead after this many model calls per prompt;
	// MaxBudgetUSD is the session's budget over every agent (0: none).
	// MaxBudgetUSD is also each workflow run's budget.
	MaxTurns     int     `json:"maxTurns,omitempty"`
	MaxBudgetUSD float64 `json:"maxBudgetUSD,omitempty"`
	// MaxConcurrentAgents bounds the agents that run at once (default 32;
	// more wait); AgentMaxTurns bounds each subagent's model calls when its
	// definition does not; AgentTimeout is each agent's deadline per piece
	// of work; MaxAgentDepth how deep agents may nest (default 3).
	MaxConcurrentAgents int           `json:"maxConcurrentAgents,omitempty"`
	AgentMaxTurns       int           `json:"agentMaxTurns,omitempty"`
	AgentTimeout        time.Duration `json:"agentTimeout,omitempty"`
	MaxAgentDepth       int           `json:"maxAgentDepth,omitempty"`
	// EvictAfter is how long a finished subagent or background agent keeps
	// its conversation in memory (default 2 minutes; negative: for the
	// session); a message to it later resumes it from its transcript, with
	// the same prompt prefix. It keeps a long session's memory flat.
	EvictAfter time.Duration `json:"evictAfter,omitempty"`

	// TeammateMode is where teammates run: auto (tmux inside tmux, else
	// in-process), in-process or tmux. TeammateBackends overrides it per
	// teammate name.
	TeammateMode     string            `json:"teammateMode,omitempty"`
	TeammateBackends map[string]string `json:"teammateBackends,omitempty"`
	// TeammatePermissionTimeout is how long a teammate waits for the lead
	// to answer a permission request (default 5 minutes; no answer denies).
	TeammatePermissionTimeout time.Duration `json:"teammatePermissionTimeout,omitempty"`
	// TeammateCommand is the cohort binary that runs teammates in tmux
	// panes (default $COHORT_TEAMMATE_BIN, else this executable: set it
	// when embedding).
	TeammateCommand string `json:"teammateCommand,omitempty"`

	// Sandbox is "on" or "off" for Bash's kernel sandbox (default: the
	// settings' sandbox.enabled, else on).
	Sandbox string `json:"sandbox,omitempty"`
	// Trace writes a Chrome trace-event file of every agent, turn, request
	// and tool call to this path.
	Trace string `json:"trace,omitempty"`

	// PartialMessages adds stream_event events: the parts of each response
	// as they stream.
	PartialMessages bool `json:"partialMessages,omitempty"`
	// StopAfterRun makes each Run end the session's other work before its
	// result: teammates are asked to shut down and tasks still running are
	// stopped (a one-shot client, such as print mode, whose result must be
	// its last event).
	StopAfterRun bool `json:"stopAfterRun,omitempty"`
	// AutoDream lets the session consolidate the project's memory in the
	// background after a lead turn when the auto_dream gates pass (package
	// dream): for long-lived sessions — a terminal UI, a stream-json
	// server, an embedding program that keeps the Session. A dream never
	// delays a turn, Run does not wait for it, and Close stops it. Off in
	// print mode, which would exit under it (StopAfterRun leaves it off).
	AutoDream bool `json:"autoDream,omitempty"`
	// Verbose reports more on Stderr (hooks run, team activity, the
	// sandbox's report).
	Verbose bool `json:"verbose,omitempty"`

	// Remote connects the session to remote workers (NATS JetStream) for
	// the Agent tool's isolation: "remote", which the remote_agents flag
	// turns on.
	Remote RemoteConfig `json:"remote,omitempty"`

	// Env sets variables over the environment Getenv and Environ read,
	// for this session only (a teammate process gets its lead's
	// credentials this way, in its configuration file).
	Env map[string]string `json:"env,omitempty"`
	// Getenv and Environ read the environment (default os.Getenv and
	// os.Environ); Stderr receives warnings (default os.Stderr).
	Getenv  func(string) string `json:"-"`
	Environ func() []string     `json:"-"`
	Stderr  io.Writer           `json:"-"`
}

// Role is a session's place in a team: empty for a lead, or the team and
// member name of a teammate, and the lead's session id (for transcripts).
type Role struct {
	Team    string `json:"team,omitempty"`
	Name    string `json:"name,omitempty"`
	Session string `json:"session,omitempty"`
	// Siblings names the batch of teammates the lead spawned together
	// with this one (`--siblings`): the first of them to start makes its
	// first model request at once, the rest after its first streamed
	// event, so they read the prompt prefix it writes to the cache.
	Siblings string `json:"siblings,omitempty"`
}

// IsTeammate reports whether the role is a teammate's.
func (r Role) IsTeammate() bool { return r.Team != "" || r.Name != "" }

// PermissionRequest is a tool call that needs an answer (Config.CanUseTool),
// with the agent that asks.
type PermissionRequest struct {
	Tool      string
	Input     json.RawMessage
	ToolUseID string
	// Reason says why the call asks.
	Reason string
	// Agent is the asking agent: AgentID, its name and kind (lead,
	// subagent, background, fork, teammate), its color in a team.
	AgentID   string
	AgentName string
	AgentKind string
	AgentType string
	Color     string
	// Suggestions are allow rules (as written in settings) that would let
	// such a call through next time: what an "allow always" answer adds.
	// Empty when the checks have none to offer (a teammate in a process of
	// its own asks without them).
	Suggestions []string
	// Unsandboxed marks a Bash call run outside the session's sandbox;
	// Blocked are directories it would write that the sandbox keeps it
	// from, unless the answer's AllowWrite opens them.
	Unsandboxed bool
	Blocked     []string
}

// Hook is one host-side hook: Func runs when Event fires (PreToolUse,
// PostToolUse, UserPromptSubmit, Stop, SubagentStop, SessionStart, …) and
// Matcher matches (a tool name or pattern for tool events, as in
// settings; empty matches all). It gets the JSON a hook command reads on
// stdin and returns what one would print on stdout: {"decision": "block",
// "reason": …}, {"hookSpecificOutput": …}, or nothing for no opinion. An
// error is a hook failure that does not block. It is called from many
// goroutines at once.
type Hook struct {
	Event   string
	Matcher string
	Func    func(ctx context.Context, input json.RawMessage) (json.RawMessage, error)
	// Timeout bounds one call (default 60 seconds).
	Timeout time.Duration
}

// AskRequest is an AskUserQuestion call: the asking agent and its
// questions.
type AskRequest struct {
	AgentID   string
	Questions []Question
}

// PlanRequest is a teammate's plan waiting for approval (Config.ApprovePlan).
type PlanRequest struct {
	AgentName string
	Color     string
	Plan      string
}

// PlanDecision answers a PlanRequest; Feedback goes to the teammate either
// way.
type PlanDecision struct {
	Approve  bool
	Feedback string
}

// Question is one question of an AskUserQuestion call, with its options
// (Claude Code's input shape).
type Question = ask.Question

// Decision answers a PermissionRequest. Message tells the model why a call
// was denied; UpdatedInput, when set, replaces the call's input.
// AlwaysAllow, with Allow, are allow rules (as written in settings, e.g.
// "Bash(make:*)") to keep: they hold for every agent of the session from
// now on and are saved to the project's .cohort/settings.local.json, as
// Claude Code's "Yes, and don't ask again" does. A rule that does not parse
// denies the call, with the reason. NoPerson marks an answer the host gave
// with nobody asked (the SDK's decisionClassification "config"): its allow
// counts as a mode's, so protected paths, writes outside the session's
// directories and sockets not a session's stay refused. AllowWrite, with
// Allow, lets sandboxed commands write in the request's Blocked for the
// rest of the session (sandbox.allowWrite, not saved).
type Decision struct {
	Allow        bool
	Message      string
	UpdatedInput json.RawMessage
	AlwaysAllow  []string
	NoPerson     bool
	AllowWrite   []string
}

// RemoteConfig connects a session to remote workers over NATS JetStream:
// with the remote_agents flag on, the Agent tool's isolation: "remote"
// runs an agent as a job on a worker (cohort worker). The zero value
// means no NATS: remote agents are refused with a sentence that says so.
// What it leaves empty comes from the user settings' "remote" object.
type RemoteConfig struct {
	// NATS is the server URL (nats://host:4222, or a comma-separated list
	// of a cluster's servers).
	NATS string `json:"nats,omitempty"`
	// Prefix starts every subject and names the streams: one per tenant
	// on a shared cluster (default "cohort").
	Prefix string `json:"prefix,omitempty"`
	// Credentials is a NATS .creds file; TLSCA, TLSCert and TLSKey are
	// PEM files for TLS (the servers' CA; a client certificate).
	Credentials string `json:"credentials,omitempty"`
	TLSCA       string `json:"tlsCA,omitempty"`
	TLSCert     string `json:"tlsCert,omitempty"`
	TLSKey      string `json:"tlsKey,omitempty"`
	// KeyName names the lead's signing key on the workers (default
	// "lead-" and the host name); the key is kept in
	// $COHORT_HOME/remote/lead.key.
	KeyName string `json:"keyName,omitempty"`
	// AckWait and MaxDeliver tune the queue (defaults 30s and 5).
	AckWait    time.Duration `json:"ackWait,omitempty"`
	MaxDeliver int           `json:"maxDeliver,omitempty"`
}
