package cli

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cohort-dev/cohort"
)

// options are the command line: the flags that describe the session,
// parsed straight into its Config, and the command line's own (print
// mode, output and input formats, the Agent SDK protocol's, --debug).
type options struct {
	cfg cohort.Config

	print           bool
	outputFormat    string
	inputFormat     string
	replayUser      bool
	permPromptTool  string
	promptTimeout   time.Duration
	debug           string
	skipPermissions bool
	partial         bool
	bg              bgOptions

	// printedResult is set once print mode has printed a result, so that
	// a failure after it does not print a second.
	printedResult bool
}

var outputFormats = []string{"text", "json", "stream-json"}

// register defines the root command's flags. Each flag's name is in
// flagOf, beside the Config field it sets.
func (o *options) register(cmd *cobra.Command) {
	f, c := cmd.PersistentFlags(), &o.cfg
	f.BoolVarP(&o.print, "print", "p", false, "print mode: run the prompt (argument or stdin) to completion and print the result")
	f.StringVar(&o.outputFormat, "output-format", "text", "print mode output: text, json or stream-json")
	f.StringVar(&c.Model, "model", "", "model id or alias (opus, sonnet, haiku), provider/model (openai/qwen3), or scripted:FILE for a scripted model")
	f.StringVar(&c.Provider, "provider", "", "the lead's provider: anthropic (default), openai (chat completions) or openai-responses")
	f.StringVar(&c.BaseURL, "base-url", "", "the provider's base URL, for a local or third-party server (http://localhost:8000/v1)")
	f.StringVar(&c.Remote.NATS, "nats", "", "NATS server for remote agents and workers (nats://host:4222)")
	f.StringVar(&c.Remote.Prefix, "nats-prefix", "", "subject prefix and stream names on NATS, one per tenant (default cohort)")
	f.StringVar(&c.Remote.Credentials, "nats-creds", "", "NATS credentials file (.creds)")
	f.StringVar(&c.Remote.TLSCA, "nats-tls-ca", "", "PEM file of the CA that signed the NATS servers' certificates")
	f.StringVar(&c.Remote.TLSCert, "nats-tls-cert", "", "PEM client certificate for NATS")
	f.StringVar(&c.Remote.TLSKey, "nats-tls-key", "", "PEM client key for NATS")
	f.DurationVar(&c.Remote.AckWait, "nats-ack-wait", 0, "cohort worker: how long a job may go without its worker's heartbeat before another worker gets it (default 30s)")
	f.StringVar(&c.Remote.KeyName, "remote-key-name", "", "the name this lead's signing key has on the workers (default lead-HOST)")
	f.IntVar(&c.MaxTurns, "max-turns", 0, "stop the lead after this many model calls per prompt (0: no limit)")
	f.StringVar(&c.SystemPrompt, "system-prompt", "", "replace the default system prompt")
	f.StringVar(&c.AppendSystemPrompt, "append-system-prompt", "", "append text to the system prompt")
	f.StringVar(&c.Dir, "cwd", "", "working directory of the session (default: the current directory)")
	f.StringVarP(&c.Resume, "resume", "r", "", "resume the session with this id (alone: the project's most recent session)")
	f.Lookup("resume").NoOptDefVal = resumeLatest
	f.StringVar(&c.SessionID, "session-id", "", "the id (a UUID) of the new session, or of the fork with --fork-session")
	f.BoolVar(&c.ForkSession, "fork-session", false, "with --resume or --continue: continue in a new session, a copy of the resumed one")
	f.StringVar(&o.inputFormat, "input-format", "text", "text (the prompt as an argument or on stdin) or stream-json (JSON lines on stdin: the Agent SDK's protocol)")
	f.BoolVar(&o.replayUser, "replay-user-messages", false, "stream-json input: echo each user message back on stdout before its turn")
	f.StringVar(&o.permPromptTool, "permission-prompt-tool", "", "stdio: send permission prompts to the host as can_use_tool control requests (stream-json input)")
	f.DurationVar(&o.promptTimeout, "permission-prompt-timeout", 0, "how long a can_use_tool request waits for the host (default 10m; no answer denies)")
	f.BoolVarP(&c.Continue, "continue", "c", false, "continue the most recent session in this project")
	f.StringVar(&c.PermissionMode, "permission-mode", "", "permission mode: default, acceptEdits, plan, dontAsk, bypassPermissions")
	f.StringArrayVar(&c.AllowedTools, "allowedTools", nil, `allow rules, several after the flag, each comma- or space-separated: --allowedTools "Bash(git diff:*)" Edit`)
	f.StringArrayVar(&c.DisallowedTools, "disallowedTools", nil, "deny rules, as --allowedTools takes them")
	f.StringArrayVar(&c.AllowedTools, "allowed-tools", nil, "same as --allowedTools")
	f.StringArrayVar(&c.DisallowedTools, "disallowed-tools", nil, "same as --disallowedTools")
	f.StringArrayVar(&c.AddDirs, "add-dir", nil, "more working directories, several after the flag")
	f.StringArrayVar(&c.Betas, "betas", nil, "beta headers for Anthropic requests (anthropic-beta), several after the flag")
	f.BoolVar(&c.Verbose, "verbose", false, "more detail on stderr (and in text output)")
	f.StringVar(&c.Agent, "agent", "", "run the lead as this agent type")
	f.StringVar(&c.Agents, "agents", "", `agent definitions as JSON: {"name": {"description": …, "prompt": …, "tools": […]}}`)
	f.StringArrayVar(&c.Flags, "flag", nil, "set a feature flag: name=value (repeatable; see cohort flags)")
	f.IntVar(&c.MaxConcurrentAgents, "max-concurrent-agents", 0, "agents that may run at once; more wait for a slot (default 32)")
	f.IntVar(&c.AgentMaxTurns, "agent-max-turns", 0, "bound every subagent's model calls when its definition sets no maxTurns (0: no bound)")
	f.DurationVar(&c.AgentTimeout, "agent-timeout", 0, "wall-clock deadline for each subagent (0: none)")
	f.IntVar(&c.MaxAgentDepth, "max-agent-depth", 0, "how deep agents may nest (default 3)")
	f.Float64Var(&c.MaxBudgetUSD, "max-budget-usd", 0, "the session's budget in dollars: every agent stops before a request that would take the session past it (it persists across --continue)")
	f.StringVar(&c.PermissionPromptCommand, "permission-prompt-command", "", "program that decides permission prompts in print mode (JSON on stdin and stdout)")
	f.StringVar(&c.Trace, "trace", "", "write a Chrome trace-event file of every agent, turn, request and tool call")
	f.StringVar(&c.TeammateMode, "teammate-mode", "", "where teammates run: auto (tmux inside tmux, else in-process), in-process, tmux, or remote (on cohort workers of --nats; the team lives on that server)")
	f.Var(backendsValue{&c.TeammateBackends}, "teammate-backend", "run one teammate on a given backend: name=in-process|tmux|remote (repeatable)")
	f.StringVar(&c.Sandbox, "sandbox", "", "run Bash in the kernel sandbox: on or off (default: the settings' sandbox.enabled, on)")
	f.StringArrayVar(&c.Settings, "settings", nil, "a settings file or JSON object applied over the settings files (repeatable; later wins)")
	f.BoolVar(&o.partial, "include-partial-messages", false, "stream-json: also print stream_event lines, the parts of each response as they stream")
	f.BoolVar(&o.skipPermissions, "dangerously-skip-permissions", false, "run every tool call without asking: the same as --permission-mode bypassPermissions")
	f.Var(listValue{list: &c.ToolPool, all: "default", given: new(bool)}, "tools", `the only tools the agents have, several after the flag, each comma- or space-separated ("Bash,Edit,Read"); "" for none, "default" for all (unlike --allowedTools, which pre-approves)`)
	f.Lookup("tools").DefValue = "default"
	f.Var(listValue{list: &c.SettingSources, all: ""}, "setting-sources", "the settings files to read, comma-separated: user, project, local (default: all)")
	f.IntVar(&c.MaxThinkingTokens, "max-thinking-tokens", 0, "turn on extended thinking for the lead with this token budget (1024 to 31999; 0: off)")
	f.StringVar(&c.FallbackModel, "fallback-model", "", "model to switch to when the model is overloaded or not found")
	f.StringArrayVar(&c.MCPConfig, "mcp-config", nil, `MCP servers: JSON files or JSON texts {"mcpServers": {name: {command, args, env} | {type: "http", url, headers}}}, several after the flag`)
	f.BoolVar(&c.StrictMCPConfig, "strict-mcp-config", false, "use only the MCP servers of --mcp-config, not those of .mcp.json or the settings")
	f.StringVarP(&o.debug, "debug", "d", "", `debug log on stderr; --debug=api,tools limits it to categories, "!team" leaves one out (api, tools, permissions, tasks, team, hooks)`)
	f.Lookup("debug").NoOptDefVal = "all"
	f.StringVar(&c.JSONSchema, "json-schema", "", `a JSON schema the final answer must match; the result carries it as structured_output`)
	f.DurationVar(&c.TeammatePermissionTimeout, "teammate-permission-timeout", 0, "how long a teammate waits for the lead to answer a permission request (default 5m; no answer denies)")
}

// flagOf names the flag that sets each Config field, for messages about
// a Config (cohort.ConfigError names fields as Config.Name).
var flagOf = map[string]string{
	"Dir": "--cwd", "Model": "--model", "Provider": "--provider", "BaseURL": "--base-url",
	"PermissionMode": "--permission-mode", "AllowedTools": "--allowedTools", "DisallowedTools": "--disallowedTools",
	"AddDirs": "--add-dir", "Betas": "--betas", "PermissionPromptCommand": "--permission-prompt-command",
	"SystemPrompt": "--system-prompt", "AppendSystemPrompt": "--append-system-prompt", "Agent": "--agent",
	"Agents": "--agents", "Flags": "--flag", "Settings": "--settings", "MCPConfig": "--mcp-config",
	"StrictMCPConfig": "--strict-mcp-config", "ToolPool": "--tools", "SettingSources": "--setting-sources",
	"MaxThinkingTokens": "--max-thinking-tokens", "FallbackModel": "--fallback-model", "JSONSchema": "--json-schema",
	"Resume": "--resume", "Continue": "--continue", "SessionID": "--session-id", "ForkSession": "--fork-session",
	"MaxTurns": "--max-turns", "MaxBudgetUSD": "--max-budget-usd", "MaxConcurrentAgents": "--max-concurrent-agents",
	"AgentMaxTurns": "--agent-max-turns", "AgentTimeout": "--agent-timeout", "MaxAgentDepth": "--max-agent-depth",
	"TeammateMode": "--teammate-mode", "TeammateBackends": "--teammate-backend",
	"TeammatePermissionTimeout": "--teammate-permission-timeout", "Sandbox": "--sandbox", "Trace": "--trace",
	"PartialMessages": "--include-partial-messages", "Verbose": "--verbose",
	"Remote.NATS": "--nats", "Remote.Prefix": "--nats-prefix", "Remote.Credentials": "--nats-creds",
	"Remote.TLSCA": "--nats-tls-ca", "Remote.TLSCert": "--nats-tls-cert", "Remote.TLSKey": "--nats-tls-key",
	"Remote.AckWait": "--nats-ack-wait", "Remote.KeyName": "--remote-key-name",
}

// fieldRef is a Config field named in a ConfigError's message.
var fieldRef = regexp.MustCompile(`\bConfig\.([A-Z][A-Za-z]*(?:\.[A-Z][A-Za-z]*)?)`)

// flagWords says a ConfigError in the command line's words: the fields it
// names become the flags that set them. Other errors are as they are.
func flagWords(err error) error {
	var ce *cohort.ConfigError
	if !errors.As(err, &ce) {
		return err
	}
	msg := fieldRef.ReplaceAllStringFunc(ce.Err.Error(), func(ref string) string {
		if f, ok := flagOf[strings.TrimPrefix(ref, "Config.")]; ok {
			return f
		}
		return ref
	})
	if f, ok := flagOf[ce.Field]; ok && !strings.Contains(msg, f) {
		msg += " (" + f + ")"
	}
	return &exitError{code: 2, err: errors.New(msg)}
}

// backendsValue is --teammate-backend name=backend, repeatable, into
// Config.TeammateBackends (which Config's check vets).
type backendsValue struct{ m *map[string]string }

func (b backendsValue) Set(kv string) error {
	name, backend, ok := strings.Cut(kv, "=")
	if !ok {
		return fmt.Errorf("%q: want name=in-process, name=tmux or name=remote", kv)
	}
	if *b.m == nil {
		*b.m = map[string]string{}
	}
	(*b.m)[name] = backend
	return nil
}

func (b backendsValue) String() string {
	var kv []string
	for name, backend := range *b.m {
		kv = append(kv, name+"="+backend)
	}
	slices.Sort(kv)
	return strings.Join(kv, ",")
}

func (backendsValue) Type() string { return "stringArray" }

// listValue is a comma- or space-separated list flag into a Config list
// whose nil means all: the value all (--tools default, --setting-sources
// "") is nil, anything else the list, empty for "" (--tools "": none).
// A variadic flag's values (--tools Bash Read) add up; any other flag's
// last value wins.
type listValue struct {
	list *[]string
	all  string
	// given, for a variadic flag, is set once the first value replaced
	// the default.
	given *bool
}

func (l listValue) Set(v string) error {
	if strings.TrimSpace(v) == l.all {
		*l.list = nil
		return nil
	}
	if l.given != nil && *l.given && *l.list != nil {
		*l.list = append(*l.list, splitList(v)...)
		return nil
	}
	if l.given != nil {
		*l.given = true
	}
	*l.list = append([]string{}, splitList(v)...)
	return nil
}

func (l listValue) String() string {
	if *l.list == nil {
		return l.all
	}
	return strings.Join(*l.list, ",")
}

func (listValue) Type() string { return "string" }

// validate checks the command line's own flags; the Config's are checked
// by cohort.New.
func (o *options) validate() error {
	if !slices.Contains(outputFormats, o.outputFormat) {
		return usageErr("--output-format %q is not one of text, json, stream-json", o.outputFormat)
	}
	if err := o.validateStream(); err != nil {
		return err
	}
	if err := o.bg.check(); err != nil {
		return err
	}
	if o.skipPermissions && o.cfg.PermissionMode != "" && o.cfg.PermissionMode != "bypassPermissions" {
		return usageErr("--dangerously-skip-permissions is --permission-mode bypassPermissions; it cannot be used with --permission-mode %s", o.cfg.PermissionMode)
	}
	_, err := newDebugFilterChecked(o.debug)
	return err
}

// config is the session the flags describe, in inv's environment: the
// parsed Config with what the command line's own flags and environment
// add.
func (o *options) config(inv *Invocation) cohort.Config {
	c := o.cfg
	c.Getenv, c.Environ, c.Stderr = inv.Getenv, inv.Environ, inv.Stderr
	if c.Resume == resumeLatest {
		c.Resume, c.Continue = "", true
	}
	if o.skipPermissions {
		c.PermissionMode = "bypassPermissions"
	}
	c.PartialMessages = o.partial && o.outputFormat == "stream-json"
	if o.debug != "" && newDebugFilter(o.debug).on("hooks") {
		c.Verbose = true
	}
	if c.Dir == "" && inv.Getwd != nil {
		if wd, err := inv.Getwd(); err == nil {
			c.Dir = wd
		}
	}
	return c
}

func usageErr(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}
