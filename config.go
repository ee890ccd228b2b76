package cohort

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
	"io"
	"os"
	"time"

	"github.com/cohort-dev/cohort/transcript"

	"github.com/cohort-dev/cohort/hook"
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
	Dir string
	// Home is where Cohort keeps its state (default $COHORT_HOME, else
	// ~/.cohort).
	Home string

	// Model is a model id or alias (opus, sonnet, haiku), provider/model
	// (openai/qwen3), or scripted:FILE for a scripted model that needs no
	// key (llm/fakeapi's script format). Default: the settings' "model",
	// else sonnet.
	Model string
	// Provider is the lead's provider: anthropic (default), openai (chat
	// completions) or openai-responses.
	Provider string
	// BaseURL points the lead's provider at a proxy or a local server.
	BaseURL string
	// APIKey is the provider's key (default ANTHROPIC_API_KEY or
	// ANTHROPIC_AUTH_TOKEN, OPENAI_API_KEY for the OpenAI providers).
	APIKey string

	// WorkflowHost is the cohort-workflow program that runs workflow
	// scripts (default: next to the running executable, else on PATH).
	WorkflowHost string

	// PermissionMode is default, acceptEdits, plan, dontAsk or
	// bypassPermissions (default: the settings' defaultMode, else default).
	PermissionMode string
	// AllowedTools and DisallowedTools add allow and deny rules
	// ("Bash(git diff:*)", "Edit"), like --allowedTools.
	AllowedTools    []string
	DisallowedTools []string
	// AddDirs are more working directories the agents may write in.
	AddDirs []string
	// PermissionPromptCommand names a program that answers permission
	// prompts (JSON on stdin and stdout), as --permission-prompt-command.
	PermissionPromptCommand string
	// CanUseTool, when set, answers every permission prompt of every agent
	// of the session (it runs after the PermissionRequest hooks and before
	// PermissionPromptCommand, which it replaces). It is called from many
	// goroutines at once.
	CanUseTool func(ctx context.Context, req PermissionRequest) (Decision, error)

	// Hooks run in this program, beside the settings' hook commands, with
	// the same input and answers (Claude Code's hook JSON): for the SDK's
	// host-side hooks and embedding programs.
	Hooks []Hook

	// AskUser, when set, answers the lead's AskUserQuestion calls (the tool
	// is offered only then): the questions, the answers keyed by question
	// text. It may block until the user answers or ctx ends.
	AskUser func(ctx context.Context, req AskRequest) (map[string]string, error)

	// ApprovePlan, when set, decides the plans of teammates that must have
	// theirs approved (planModeRequired, Agent's mode "plan") instead of
	// the lead model: a person at a terminal UI. An error leaves the plan
	// to the lead model. It is called from many goroutines at once.
	ApprovePlan func(ctx context.Context, req PlanRequest) (PlanDecision, error)

	// SystemPrompt replaces the default system prompt; AppendSystemPrompt
	// is added to it.
	SystemPrompt       string
	AppendSystemPrompt string
	// Agent runs the lead as this agent type.
	Agent string
	// Agents adds agent definitions, as JSON in the format of --agents:
	// {"name": {"description": …, "prompt": …, "tools": […]}}.
	Agents string
	// Flags set feature flags, "name=value" each (see cohort flags).
	Flags []string
	// Settings are more settings layers over the settings files, later
	// ones winning: each a JSON object, or the path of a settings file (as
	// --settings).
	Settings []string
	// Proactive appends an agent definition's prompt to the default system
	// prompt instead of replacing it.
	Proactive bool
	// MCPConfig are more MCP server configurations, as --mcp-config: each
	// JSON text {"mcpServers": {name: {command, args, env} | {type: "http",
	// url, headers}}}, or the paths of such files (space-separated). They
	// count as approved. StrictMCPConfig makes them the only servers
	// (.mcp.json and the settings' mcpServers are not read).
	MCPConfig       []string
	StrictMCPConfig bool
	// MCPTransports are MCP servers in this program, by name, reached
	// through any go-sdk transport (mcp.NewInMemoryTransports for a server
	// of the program's own; the Agent SDK host's servers over the control
	// protocol). Their tools are mcp__<name>__<tool> like any server's,
	// and they count as approved.
	MCPTransports map[string]sdkmcp.Transport
	// Tools are more tools for every agent of the session; they come after
	// the built-in tools, in this order (the order is part of the cached
	// prompt).
	Tools []tool.Tool
	// ToolPool, when not nil, is the only tools the session's agents have
	// (Claude Code's --tools): names of built-in tools or of Tools, "Task"
	// read as "Agent"; an empty, non-nil list leaves no tools at all. It is
	// a filter, unlike AllowedTools, which pre-approves calls.
	ToolPool []string
	// SettingSources, when not nil, are the only settings files read, by
	// scope: "user", "project", "local" (Claude Code's --setting-sources).
	// Settings layers are applied whatever it says.
	SettingSources []string
	// MaxThinkingTokens turns on extended thinking for the lead with this
	// budget (at least 1024, below the 32000 output tokens; 0: off).
	MaxThinkingTokens int
	// FallbackModel takes over the requests for the lead's model when that
	// model is overloaded or does not exist (llm.Fallback), for the rest of
	// the session.
	FallbackModel string
	// JSONSchema, when set, is a JSON schema the lead's final answer must
	// match (Claude Code's --json-schema): the prompt says so, an answer
	// that does not match is sent back with what is wrong (five answers at
	// most, then the Run fails with StopStructuredOutputRetries), and the
	// result carries the answer as StructuredOutput.
	JSONSchema string

	// Resume continues the session with this id; Continue the most recent
	// session of the project.
	Resume   string
	Continue bool
	// SessionID is the id of a new session (a UUID, not yet used in the
	// project) instead of a fresh one; with ForkSession, the fork's id.
	SessionID string
	// ForkSession, with Resume or Continue, continues in a new session: a
	// copy of the resumed transcript under a new id (SessionID, else a
	// fresh one), leaving the original as it was.
	ForkSession bool
	// Role makes the session a teammate of a team instead of a lead (what
	// `cohort teammate` runs); Run then runs it until it is shut down.
	Role Role

	// MaxTurns stops the lead after this many model calls per prompt;
	// MaxBudgetUSD once its cost reaches this many dollars (0: no limit).
	// MaxBudgetUSD is also each workflow run's budget.
	MaxTurns     int
	MaxBudgetUSD float64
	// MaxConcurrentAgents bounds the agents that run at once (default 32;
	// more wait); AgentMaxTurns bounds each subagent's model calls when its
	// definition does not; AgentTimeout is each agent's deadline per piece
	// of work; MaxAgentDepth how deep agents may nest (default 3).
	MaxConcurrentAgents int
	AgentMaxTurns       int
	AgentTimeout        time.Duration
	MaxAgentDepth       int
	// EvictAfter is how long a finished subagent or background agent keeps
	// its conversation in memory (default 2 minutes; negative: for the
	// session); a message to it later resumes it from its transcript, with
	// the same prompt prefix. It keeps a long session's memory flat.
	EvictAfter time.Duration

	// TeammateMode is where teammates run: auto (tmux inside tmux, else
	// in-process), in-process or tmux. TeammateBackends overrides it per
	// teammate name.
	TeammateMode     string
	TeammateBackends map[string]string
	// TeammatePermissionTimeout is how long a teammate waits for the lead
	// to answer a permission request (default 5 minutes; no answer denies).
	TeammatePermissionTimeout time.Duration
	// TeammateCommand is the cohort binary that runs teammates in tmux
	// panes (default $COHORT_TEAMMATE_BIN, else this executable: set it
	// when embedding).
	TeammateCommand string

	// Sandbox is "on" or "off" for Bash's kernel sandbox (default: the
	// settings' sandbox.enabled, else on).
	Sandbox string
	// Trace writes a Chrome trace-event file of every agent, turn, request
	// and tool call to this path.
	Trace string

	// PartialMessages adds stream_event events: the parts of each response
	// as they stream.
	PartialMessages bool
	// StopAfterRun makes each Run end the session's other work before its
	// result: teammates are asked to shut down and tasks still running are
	// stopped (a one-shot client, such as print mode, whose result must be
	// its last event).
	StopAfterRun bool
	// AutoDream lets the session consolidate the project's memory in the
	// background after a lead turn when the auto_dream gates pass (package
	// dream): for long-lived sessions — a terminal UI, a stream-json
	// server, an embedding program that keeps the Session. A dream never
	// delays a turn, Run does not wait for it, and Close stops it. Off in
	// print mode, which would exit under it (StopAfterRun leaves it off).
	AutoDream bool
	// Verbose reports more on Stderr (hooks run, team activity, the
	// sandbox's report).
	Verbose bool

	// Remote connects the session to remote workers (NATS JetStream) for
	// the Agent tool's isolation: "remote", which the remote_agents flag
	// turns on.
	Remote RemoteConfig

	// Getenv and Environ read the environment (default os.Getenv and
	// os.Environ); Stderr receives warnings (default os.Stderr).
	Getenv  func(string) string
	Environ func() []string
	Stderr  io.Writer

	// remoteClone: Dir is a remote job's clone, made for the session and
	// removed after it (RemoteRunner), whose git dir the sandbox leaves
	// writable so that the job's agent can commit.
	remoteClone bool
}

// Role is a session's place in a team: empty for a lead, or the team and
// member name of a teammate, and the lead's session id (for transcripts).
type Role struct {
	Team    string
	Name    string
	Session string
	// Siblings names the batch of teammates the lead spawned together
	// with this one (`--siblings`): the first of them to start makes its
	// first model request at once, the rest after its first streamed
	// event, so they read the prompt prefix it writes to the cache.
	Siblings string
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

// funcHooks converts the Config's hooks.
func (c Config) funcHooks() (*hook.Set, error) {
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
// denies the call, with the reason.
type Decision struct {
	Allow        bool
	Message      string
	UpdatedInput json.RawMessage
	AlwaysAllow  []string
}

// ConfigError is a Config that cannot work: Field names the Config field,
// and the message says what is wrong and what to do. New returns it before
// anything is written under Home.
type ConfigError struct {
	Field string
	Err   error
}

func (e *ConfigError) Error() string { return fmt.Sprintf("%v (Config.%s)", e.Err, e.Field) }
func (e *ConfigError) Unwrap() error { return e.Err }

// check rejects what is wrong in the Config itself, before anything is
// read or written.
func (c Config) check() error {
	switch c.TeammateMode {
	case "", "auto", "in-process", "tmux":
	default:
		return configErr("TeammateMode", "%q is not one of auto, in-process, tmux", c.TeammateMode)
	}
	for name, b := range c.TeammateBackends {
		if name == "" || (b != "in-process" && b != "tmux") {
			return configErr("TeammateBackends", "%s=%s: want a teammate name and in-process or tmux", name, b)
		}
	}
	switch c.Sandbox {
	case "", "on", "off":
	default:
		return configErr("Sandbox", "%q: want on or off", c.Sandbox)
	}
	if c.Resume != "" && c.Continue {
		return configErr("Continue", "Resume and Continue cannot be used together: resume one session or continue the latest")
	}
	if c.SessionID != "" && !transcript.ValidID(c.SessionID) {
		return configErr("SessionID", "%q is not a UUID (e.g. 0b6f6c2e-3b1a-4c8e-9d2f-5a7e1c4b9d10)", c.SessionID)
	}
	if c.SessionID != "" && (c.Resume != "" || c.Continue) && !c.ForkSession {
		return configErr("SessionID", "a resumed session keeps its id; add ForkSession (--fork-session) to continue it under %s", c.SessionID)
	}
	if c.ForkSession && c.Resume == "" && !c.Continue {
		return configErr("ForkSession", "fork which session? give Resume (--resume ID) or Continue (--continue)")
	}
	if c.MaxTurns < 0 || c.MaxConcurrentAgents < 0 || c.MaxBudgetUSD < 0 || c.AgentMaxTurns < 0 || c.AgentTimeout < 0 || c.MaxAgentDepth < 0 {
		return configErr("MaxTurns", "the limits (MaxTurns, MaxBudgetUSD, MaxConcurrentAgents, AgentMaxTurns, AgentTimeout, MaxAgentDepth) must not be negative")
	}
	if c.Role.IsTeammate() && (c.Role.Team == "" || c.Role.Name == "") {
		return configErr("Role", "a teammate role needs both Team and Name")
	}
	for _, t := range c.Tools {
		if t == nil {
			return configErr("Tools", "a tool is nil")
		}
	}
	if err := c.checkParity(); err != nil {
		return err
	}
	if err := c.checkJSONSchema(); err != nil {
		return err
	}
	if err := c.checkMCP(); err != nil {
		return err
	}
	_, err := c.funcHooks()
	return err
}

func configErr(field, format string, args ...any) error {
	return &ConfigError{Field: field, Err: fmt.Errorf(format, args...)}
}

// ErrClosed is returned by the methods of a closed Session.
var ErrClosed = errors.New("cohort: the session is closed")

// options are the settings the session is built from, named as the command
// line's flags (the code that builds a session reads them).
type options struct {
	model, provider, baseURL              string
	maxTurns                              int
	systemPrompt, appendSystemPrompt, cwd string
	resume                                string
	continueLast                          bool
	sessionID                             string
	fork                                  bool
	permissionMode                        string
	allowedTools, disallowedTools         []string
	addDirs                               []string
	verbose                               bool
	agentName, agentsJSON                 string
	flags                                 []string
	maxConcurrent                         int
	maxBudgetUSD                          float64
	permPromptCommand, trace              string
	teammateMode                          string
	agentMaxTurns                         int
	agentTimeout                          time.Duration
	maxDepth                              int
	teammateBackends                      []string
	permissionTimeout                     time.Duration
	sandbox                               string
	settings                              []string
	toolPool, settingSources              []string
	maxThinkingTokens                     int
	fallbackModel                         string
	mcpConfigs                            []string
	strictMCP                             bool
	mcpTransports                         map[string]sdkmcp.Transport
	evictAfter                            time.Duration
}

func (c Config) options() *options {
	o := &options{model: c.Model, provider: c.Provider, baseURL: c.BaseURL, maxTurns: c.MaxTurns,
		systemPrompt: c.SystemPrompt, appendSystemPrompt: c.AppendSystemPrompt, cwd: c.Dir,
		resume: c.Resume, continueLast: c.Continue, sessionID: c.SessionID, fork: c.ForkSession, permissionMode: c.PermissionMode,
		allowedTools: c.AllowedTools, disallowedTools: c.DisallowedTools, addDirs: c.AddDirs,
		verbose: c.Verbose, agentName: c.Agent, agentsJSON: c.Agents, flags: c.Flags,
		maxConcurrent: c.MaxConcurrentAgents, maxBudgetUSD: c.MaxBudgetUSD,
		permPromptCommand: c.PermissionPromptCommand, trace: c.Trace, teammateMode: c.TeammateMode,
		agentMaxTurns: c.AgentMaxTurns, agentTimeout: c.AgentTimeout, maxDepth: c.MaxAgentDepth,
		permissionTimeout: c.TeammatePermissionTimeout, sandbox: c.Sandbox, settings: c.Settings,
		toolPool: c.ToolPool, settingSources: c.SettingSources, maxThinkingTokens: c.MaxThinkingTokens,
		fallbackModel: c.FallbackModel, mcpConfigs: c.MCPConfig, strictMCP: c.StrictMCPConfig,
		mcpTransports: c.MCPTransports, evictAfter: c.EvictAfter}
	for name, b := range c.TeammateBackends {
		o.teammateBackends = append(o.teammateBackends, name+"="+b)
	}
	return o
}

// invocation is what the session takes from its process: the environment
// (with Config's Home and APIKey over it) and where warnings go.
type invocation struct {
	Getenv  func(string) string
	Environ func() []string
	Stderr  io.Writer
	Getwd   func() (string, error)
}

func (c Config) invocation() *invocation {
	inv := &invocation{Getenv: c.Getenv, Environ: c.Environ, Stderr: c.Stderr, Getwd: os.Getwd}
	if inv.Getenv == nil {
		inv.Getenv = os.Getenv
	}
	if inv.Environ == nil {
		inv.Environ = os.Environ
	}
	if inv.Stderr == nil {
		inv.Stderr = os.Stderr
	}
	over := map[string]string{}
	if c.Home != "" {
		over["COHORT_HOME"] = c.Home
	}
	if c.APIKey != "" {
		switch c.Provider {
		case providerOpenAI, providerResponses:
			over["OPENAI_API_KEY"] = c.APIKey
		default:
			over["ANTHROPIC_API_KEY"] = c.APIKey
		}
	}
	if c.TeammateCommand != "" {
		over["COHORT_TEAMMATE_BIN"] = c.TeammateCommand
	}
	if len(over) > 0 {
		getenv, environ := inv.Getenv, inv.Environ
		inv.Getenv = func(k string) string {
			if v, ok := over[k]; ok {
				return v
			}
			return getenv(k)
		}
		inv.Environ = func() []string {
			var out []string
			for _, kv := range environ() {
				k, _, _ := cutEq(kv)
				if _, ok := over[k]; !ok {
					out = append(out, kv)
				}
			}
			for k, v := range over {
				out = append(out, k+"="+v)
			}
			return out
		}
	}
	return inv
}

func cutEq(kv string) (k, v string, ok bool) {
	for i := 0; i < len(kv); i++ {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return kv, "", false
}
