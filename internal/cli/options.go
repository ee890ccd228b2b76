package cli

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cohort-dev/cohort"
)

// options are the root command's flags.
type options struct {
	remote             cohort.RemoteConfig
	print              bool
	outputFormat       string
	model              string
	provider           string
	baseURL            string
	maxTurns           int
	systemPrompt       string
	appendSystemPrompt string
	cwd                string
	resume             string
	continueLast       bool
	permissionMode     string
	allowedTools       []string
	disallowedTools    []string
	addDirs            []string
	verbose            bool
	agentName          string
	agentsJSON         string
	flags              []string
	maxConcurrent      int
	maxBudgetUSD       float64
	permPromptCommand  string
	trace              string
	teammateMode       string
	agentMaxTurns      int
	agentTimeout       time.Duration
	maxDepth           int
	teammateBackends   []string
	permissionTimeout  time.Duration
	sandbox            string
	settings           []string
	partial            bool
	skipPermissions    bool
	tools              string
	settingSources     string
	maxThinkingTokens  int
	fallbackModel      string
	mcpConfigs         []string
	strictMCP          bool
	debug              string
	jsonSchema         string
	inputFormat        string
	replayUser         bool
	permPromptTool     string
	promptTimeout      time.Duration
	sessionID          string
	forkSession        bool

	// printedResult is set once print mode has printed a result, so that
	// a failure after it does not print a second.
	printedResult bool
}

var outputFormats = []string{"text", "json", "stream-json"}

func (o *options) register(cmd *cobra.Command) {
	f := cmd.PersistentFlags()
	f.BoolVarP(&o.print, "print", "p", false, "print mode: run the prompt (argument or stdin) to completion and print the result")
	f.StringVar(&o.outputFormat, "output-format", "text", "print mode output: text, json or stream-json")
	f.StringVar(&o.model, "model", "", "model id or alias (opus, sonnet, haiku), provider/model (openai/qwen3), or scripted:FILE for a scripted model")
	f.StringVar(&o.provider, "provider", "", "the lead's provider: anthropic (default), openai (chat completions) or openai-responses")
	f.StringVar(&o.baseURL, "base-url", "", "the provider's base URL, for a local or third-party server (http://localhost:8000/v1)")
	f.StringVar(&o.remote.NATS, "nats", "", "NATS server for remote agents and workers (nats://host:4222)")
	f.StringVar(&o.remote.Prefix, "nats-prefix", "", "subject prefix and stream names on NATS, one per tenant (default cohort)")
	f.StringVar(&o.remote.Credentials, "nats-creds", "", "NATS credentials file (.creds)")
	f.StringVar(&o.remote.TLSCA, "nats-tls-ca", "", "PEM file of the CA that signed the NATS servers' certificates")
	f.StringVar(&o.remote.TLSCert, "nats-tls-cert", "", "PEM client certificate for NATS")
	f.StringVar(&o.remote.TLSKey, "nats-tls-key", "", "PEM client key for NATS")
	f.DurationVar(&o.remote.AckWait, "nats-ack-wait", 0, "how long a remote job may go without a worker's heartbeat before another worker gets it (default 30s; leads and workers should agree)")
	f.StringVar(&o.remote.KeyName, "remote-key-name", "", "the name this lead's signing key has on the workers (default lead-HOST)")
	f.IntVar(&o.maxTurns, "max-turns", 0, "stop the lead after this many model calls per prompt (0: no limit)")
	f.StringVar(&o.systemPrompt, "system-prompt", "", "replace the default system prompt")
	f.StringVar(&o.appendSystemPrompt, "append-system-prompt", "", "append text to the system prompt")
	f.StringVar(&o.cwd, "cwd", "", "working directory of the session (default: the current directory)")
	f.StringVarP(&o.resume, "resume", "r", "", "resume the session with this id (alone: the project's most recent session)")
	f.Lookup("resume").NoOptDefVal = resumeLatest
	f.StringVar(&o.sessionID, "session-id", "", "the id (a UUID) of the new session, or of the fork with --fork-session")
	f.BoolVar(&o.forkSession, "fork-session", false, "with --resume or --continue: continue in a new session, a copy of the resumed one")
	f.StringVar(&o.inputFormat, "input-format", "text", "text (the prompt as an argument or on stdin) or stream-json (JSON lines on stdin: the Agent SDK's protocol)")
	f.BoolVar(&o.replayUser, "replay-user-messages", false, "stream-json input: echo each user message back on stdout before its turn")
	f.StringVar(&o.permPromptTool, "permission-prompt-tool", "", "stdio: send permission prompts to the host as can_use_tool control requests (stream-json input)")
	f.DurationVar(&o.promptTimeout, "permission-prompt-timeout", 0, "how long a can_use_tool request waits for the host (default 10m; no answer denies)")
	f.BoolVarP(&o.continueLast, "continue", "c", false, "continue the most recent session in this project")
	f.StringVar(&o.permissionMode, "permission-mode", "", "permission mode: default, acceptEdits, plan, dontAsk, bypassPermissions")
	f.StringArrayVar(&o.allowedTools, "allowedTools", nil, `allow rules, comma- or space-separated, e.g. "Bash(git diff:*) Edit"`)
	f.StringArrayVar(&o.disallowedTools, "disallowedTools", nil, "deny rules, comma- or space-separated")
	f.StringArrayVar(&o.allowedTools, "allowed-tools", nil, "same as --allowedTools")
	f.StringArrayVar(&o.disallowedTools, "disallowed-tools", nil, "same as --disallowedTools")
	f.StringArrayVar(&o.addDirs, "add-dir", nil, "additional working directory (repeatable)")
	f.BoolVar(&o.verbose, "verbose", false, "more detail on stderr (and in text output)")
	f.StringVar(&o.agentName, "agent", "", "run the lead as this agent type")
	f.StringVar(&o.agentsJSON, "agents", "", `agent definitions as JSON: {"name": {"description": …, "prompt": …, "tools": […]}}`)
	f.StringArrayVar(&o.flags, "flag", nil, "set a feature flag: name=value (repeatable; see cohort flags)")
	f.IntVar(&o.maxConcurrent, "max-concurrent-agents", 0, "agents that may run at once; more wait for a slot (default 32)")
	f.IntVar(&o.agentMaxTurns, "agent-max-turns", 0, "bound every subagent's model calls when its definition sets no maxTurns (0: no bound)")
	f.DurationVar(&o.agentTimeout, "agent-timeout", 0, "wall-clock deadline for each subagent (0: none)")
	f.IntVar(&o.maxDepth, "max-agent-depth", 0, "how deep agents may nest (default 3)")
	f.Float64Var(&o.maxBudgetUSD, "max-budget-usd", 0, "stop the lead once its cost reaches this many dollars")
	f.StringVar(&o.permPromptCommand, "permission-prompt-command", "", "program that decides permission prompts in print mode (JSON on stdin and stdout)")
	f.StringVar(&o.trace, "trace", "", "write a Chrome trace-event file of every agent, turn, request and tool call")
	f.StringVar(&o.teammateMode, "teammate-mode", "", "where teammates run: auto (tmux inside tmux, else in-process), in-process or tmux")
	f.StringArrayVar(&o.teammateBackends, "teammate-backend", nil, "run one teammate on a given backend: name=in-process|tmux (repeatable)")
	f.StringVar(&o.sandbox, "sandbox", "", "run Bash in the kernel sandbox: on or off (default: the settings' sandbox.enabled, on)")
	f.StringArrayVar(&o.settings, "settings", nil, "a settings file or JSON object applied over the settings files (repeatable; later wins)")
	f.BoolVar(&o.partial, "include-partial-messages", false, "stream-json: also print stream_event lines, the parts of each response as they stream")
	f.BoolVar(&o.skipPermissions, "dangerously-skip-permissions", false, "run every tool call without asking: the same as --permission-mode bypassPermissions")
	f.StringVar(&o.tools, "tools", "default", `the only tools the agents have, comma- or space-separated ("Bash,Edit,Read"); "" for none, "default" for all (unlike --allowedTools, which pre-approves)`)
	f.StringVar(&o.settingSources, "setting-sources", "", "the settings files to read, comma-separated: user, project, local (default: all)")
	f.IntVar(&o.maxThinkingTokens, "max-thinking-tokens", 0, "turn on extended thinking for the lead with this token budget (1024 to 31999; 0: off)")
	f.StringVar(&o.fallbackModel, "fallback-model", "", "model to switch to when the model is overloaded or not found")
	f.StringArrayVar(&o.mcpConfigs, "mcp-config", nil, `MCP servers: a JSON file or JSON text {"mcpServers": {name: {command, args, env} | {type: "http", url, headers}}} (repeatable)`)
	f.BoolVar(&o.strictMCP, "strict-mcp-config", false, "use only the MCP servers of --mcp-config, not those of .mcp.json or the settings")
	f.StringVarP(&o.debug, "debug", "d", "", `debug log on stderr; --debug=api,tools limits it to categories, "!team" leaves one out (api, tools, permissions, tasks, team, hooks)`)
	f.Lookup("debug").NoOptDefVal = "all"
	f.StringVar(&o.jsonSchema, "json-schema", "", `a JSON schema the final answer must match; the result carries it as structured_output`)
	f.DurationVar(&o.permissionTimeout, "teammate-permission-timeout", 0, "how long a teammate waits for the lead to answer a permission request (default 5m; no answer denies)")
}

func (o *options) validate() error {
	if !slices.Contains(outputFormats, o.outputFormat) {
		return usageErr("--output-format %q is not one of text, json, stream-json", o.outputFormat)
	}
	switch o.teammateMode {
	case "", "auto", "in-process", "tmux":
	default:
		return usageErr("--teammate-mode %q is not one of auto, in-process, tmux", o.teammateMode)
	}
	for _, kv := range o.teammateBackends {
		name, b, ok := strings.Cut(kv, "=")
		if !ok || name == "" || (b != "in-process" && b != "tmux") {
			return usageErr("--teammate-backend %q: want name=in-process or name=tmux", kv)
		}
	}
	if err := o.validateStream(); err != nil {
		return err
	}
	if o.resume != "" && o.continueLast {
		return usageErr("--resume and --continue cannot be used together")
	}
	if err := o.validateParity(); err != nil {
		return err
	}
	if o.maxTurns < 0 || o.maxConcurrent < 0 || o.maxBudgetUSD < 0 || o.agentMaxTurns < 0 || o.agentTimeout < 0 || o.maxDepth < 0 {
		return usageErr("--max-turns, --max-concurrent-agents, --max-budget-usd, --agent-max-turns, --agent-timeout and --max-agent-depth must not be negative")
	}
	return nil
}

// config is the session the flags describe, in inv's environment.
func (o *options) config(inv *Invocation) cohort.Config {
	c := cohort.Config{Dir: o.cwd, Model: o.model, Provider: o.provider, BaseURL: o.baseURL,
		PermissionMode: o.permissionMode, AllowedTools: o.allowedTools, DisallowedTools: o.disallowedTools,
		AddDirs: o.addDirs, PermissionPromptCommand: o.permPromptCommand,
		SystemPrompt: o.systemPrompt, AppendSystemPrompt: o.appendSystemPrompt,
		Agent: o.agentName, Agents: o.agentsJSON, Flags: o.flags, Settings: o.settings,
		Resume: o.resume, Continue: o.continueLast,
		MaxTurns: o.maxTurns, MaxBudgetUSD: o.maxBudgetUSD, MaxConcurrentAgents: o.maxConcurrent,
		AgentMaxTurns: o.agentMaxTurns, AgentTimeout: o.agentTimeout, MaxAgentDepth: o.maxDepth,
		TeammateMode: o.teammateMode, TeammatePermissionTimeout: o.permissionTimeout,
		Sandbox: o.sandbox, Trace: o.trace, PartialMessages: o.partial && o.outputFormat == "stream-json",
		Verbose: o.verbose, Getenv: inv.Getenv, Environ: inv.Environ, Stderr: inv.Stderr,
		ToolPool: o.toolPool(), SettingSources: o.sources(), MaxThinkingTokens: o.maxThinkingTokens,
		FallbackModel: o.fallbackModel, JSONSchema: o.jsonSchema,
		SessionID: o.sessionID, ForkSession: o.forkSession,
		MCPConfig: o.mcpConfigs, StrictMCPConfig: o.strictMCP, Remote: o.remote}
	if c.Resume == resumeLatest {
		c.Resume, c.Continue = "", true
	}
	if o.skipPermissions {
		c.PermissionMode = "bypassPermissions"
	}
	if o.debug != "" && newDebugFilter(o.debug).on("hooks") {
		c.Verbose = true
	}
	if o.cwd == "" && inv.Getwd != nil {
		if wd, err := inv.Getwd(); err == nil {
			c.Dir = wd
		}
	}
	if len(o.teammateBackends) > 0 {
		c.TeammateBackends = map[string]string{}
		for _, kv := range o.teammateBackends {
			name, b, _ := strings.Cut(kv, "=")
			c.TeammateBackends[name] = b
		}
	}
	return c
}

func usageErr(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}
