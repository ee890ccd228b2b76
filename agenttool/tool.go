package agenttool

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/cohort-dev/cohort/agent"
	"github.com/cohort-dev/cohort/flags"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
)

// Name is the Agent tool's name (Claude Code's).
const Name = "Agent"

// namePattern is what an agent name must match (Claude Code's pattern).
var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// Input is the Agent tool's input, with Claude Code's field names.
type Input struct {
	Description     string `json:"description"`
	Prompt          string `json:"prompt"`
	SubagentType    string `json:"subagent_type,omitempty"`
	Model           string `json:"model,omitempty"`
	RunInBackground bool   `json:"run_in_background,omitempty"`
	Name            string `json:"name,omitempty"`
	TeamName        string `json:"team_name,omitempty"`
	Mode            string `json:"mode,omitempty"`
	Isolation       string `json:"isolation,omitempty"`
	Cwd             string `json:"cwd,omitempty"`
}

// Tool is the Agent tool. Its definition depends on the session's catalog
// and flags, which are fixed for the session, so it is stable.
type Tool struct {
	rt *Runtime
}

const agentToolIntro = `Start another agent to carry out a task on its own and report back. Each agent begins with a fresh context: it sees only the prompt you write, so include the goal, the relevant paths and facts you already know, constraints, and what its report should contain.

Use agents for work that is self-contained: a broad search or investigation, an independent change, a review, a verification. For a quick lookup of a known file, use Read or Grep yourself.

- Several Agent calls in one message run concurrently; prefer that when the pieces are independent.
- run_in_background: true returns at once; you are notified with a <task-notification> when the agent finishes. Without it you wait for the result.
- The agent's final message is returned to you, not shown to the user; relay what matters.
- Give an agent a name to address it later with SendMessage while it runs.`

// Def returns the tool definition.
func (t *Tool) Def() llm.ToolDef {
	return llm.ToolDef{Name: Name, Description: t.description(), InputSchema: t.schema().JSON()}
}

func (t *Tool) description() string {
	var b strings.Builder
	b.WriteString(agentToolIntro)
	if t.rt.flags().Bool(flags.AgentListAttachment) {
		b.WriteString("\n\nThe agent types you can choose from are listed in a system reminder in the conversation.")
		return b.String()
	}
	b.WriteString("\n\n")
	b.WriteString(AgentList(t.rt.cfg.Catalog))
	return b.String()
}

// AgentList renders the available agent types, one per line, for the tool
// description or (with agent_list_attachment) a system reminder.
func AgentList(cat *agent.Catalog) string {
	var b strings.Builder
	b.WriteString("Agent types (subagent_type):\n")
	for _, d := range cat.List() {
		tools := "all tools"
		if len(d.Tools) > 0 {
			tools = strings.Join(d.Tools, ", ")
		}
		fmt.Fprintf(&b, "- %s: %s (Tools: %s)\n", d.Name, oneLine(d.Description), tools)
	}
	return strings.TrimRight(b.String(), "\n")
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func (t *Tool) schema() tool.Schema {
	props := []tool.Property{
		tool.Required("description", tool.String("A short (3-5 word) description of the task.").WithMinLength(1)),
		tool.Required("prompt", tool.String("The complete task for the agent, with all the context it needs.").WithMinLength(1)),
		tool.Optional("subagent_type", tool.String("The type of agent to start (see the list). Defaults to general-purpose.")),
		tool.Optional("model", tool.String("Model for this agent: an alias (opus, sonnet, haiku) or a model id. Defaults to the agent type's model, else yours.")),
		tool.Optional("run_in_background", tool.Boolean("Run the agent in the background and be notified when it finishes.")),
		tool.Optional("name", tool.String("A name that makes the agent addressable with SendMessage while it runs.")),
		tool.Optional("team_name", tool.String("With name: spawn the agent as a teammate of this team.")),
		tool.Optional("mode", tool.Enum("Permission mode for the agent.", "default", "acceptEdits", "plan", "dontAsk", "bypassPermissions")),
		tool.Optional("isolation", tool.Enum("Run the agent in its own git worktree, or on a remote worker.", "worktree", "remote")),
	}
	if t.rt.flags().Bool(flags.AgentCwd) {
		props = append(props, tool.Optional("cwd", tool.String("Working directory for the agent (absolute path).")))
	}
	return tool.Object(props...)
}

// Traits: Agent calls run in parallel and need no approval themselves; the
// child's own calls are checked.
func (t *Tool) Traits(json.RawMessage) tool.Traits {
	return tool.Traits{ReadOnly: true, ConcurrencySafe: true}
}

// Run routes one Agent call to its spawn path (ARCHITECTURE.md section 2).
func (t *Tool) Run(ctx context.Context, env *tool.Env, raw json.RawMessage) (tool.Result, error) {
	var in Input
	if err := json.Unmarshal(raw, &in); err != nil {
		return tool.Errorf("Agent input is not valid: %v", err), nil
	}
	parent, ok := t.rt.Lookup(env.AgentID)
	if !ok {
		return tool.Result{}, errorf("agenttool: the calling agent %q is not registered with the runtime", env.AgentID)
	}
	if in.Name != "" && !namePattern.MatchString(in.Name) {
		return tool.Errorf("Invalid agent name %q: a name must match %s (letters, digits, '_' and '-', starting with a letter or digit, at most 64 characters).", in.Name, namePattern), nil
	}
	switch {
	case in.TeamName != "" && in.Name != "":
		return t.rt.spawnTeammate(ctx, parent, env, in)
	case in.TeamName != "":
		return tool.Errorf("team_name needs a name: a teammate is spawned with both team_name and name."), nil
	case in.Isolation == "remote":
		return tool.Errorf("isolation: remote is not available in this build yet (remote agents on NATS workers are a later feature). Run the agent locally instead."), nil
	}
	def, errRes := t.rt.resolveType(parent, in)
	if errRes != nil {
		return *errRes, nil
	}
	if def == nil {
		return t.rt.spawnFork(ctx, parent, env, in)
	}
	background := in.RunInBackground || def.Background
	return t.rt.spawnSubagent(ctx, parent, env, in, def, background)
}

// resolveType picks the definition for a call; nil with no error result
// means the fork path.
func (rt *Runtime) resolveType(parent *Agent, in Input) (*agent.Definition, *tool.Result) {
	forkOn := rt.flags().Bool(flags.ForkSubagent)
	name := in.SubagentType
	switch {
	case name == "fork" && !forkOn:
		r := tool.Errorf(`subagent_type "fork" needs the fork_subagent flag, which is off. Turn it on with --flag fork_subagent=on (or COHORT_FLAG_FORK_SUBAGENT=on), or choose an agent type: %s.`, typeNames(rt.cfg.Catalog))
		return nil, &r
	case name == "fork", name == "" && forkOn:
		return nil, nil
	case name == "":
		name = agent.GeneralPurpose
	}
	def, ok := rt.cfg.Catalog.Get(name)
	if !ok {
		r := tool.Errorf("Unknown subagent_type %q. Available agent types: %s.", name, typeNames(rt.cfg.Catalog))
		return nil, &r
	}
	if parent.Def != nil && !parent.Def.CanSpawn(def.Name) {
		r := tool.Errorf("This agent may only start these agent types: %s.", strings.Join(parent.Def.AgentTypes, ", "))
		return nil, &r
	}
	return def, nil
}

func typeNames(cat *agent.Catalog) string {
	var names []string
	for _, d := range cat.List() {
		names = append(names, d.Name)
	}
	return strings.Join(names, ", ")
}
