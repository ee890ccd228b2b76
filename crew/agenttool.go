package crew

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/flags"
	"github.com/cohort-dev/cohort/internal/lazyre"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/tool"
)

// EffortLevels are the values of the Agent call's effort field (Claude
// Code's).
var EffortLevels = []string{"low", "medium", "high", "xhigh", "max"}

// namePattern is what an agent name must match (Claude Code's pattern).
var namePattern = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// AgentInput is the Agent tool's input, with Claude Code's field names.
type AgentInput struct {
	Description     string `json:"description"`
	Prompt          string `json:"prompt"`
	SubagentType    string `json:"subagent_type,omitempty"`
	Model           string `json:"model,omitempty"`
	Effort          string `json:"effort,omitempty"`
	RunInBackground *bool  `json:"run_in_background,omitempty"`
	Name            string `json:"name,omitempty"`
	TeamName        string `json:"team_name,omitempty"`
	Mode            string `json:"mode,omitempty"`
	Isolation       string `json:"isolation,omitempty"`
	Cwd             string `json:"cwd,omitempty"`
}

// Config wires the Agent tool.
type AgentToolConfig struct {
	// Runtime builds the agents it spawns (required).
	Runtime *Crew
	// Teammates runs the teammate path (team_name and name); nil means
	// teams are not available in the session.
	Teammates TeammateSpawner
}

// agentTool is the Agent tool's state. Its definition depends on the session's
// catalog and flags, which are fixed for the session, so it is stable.
type agentTool struct {
	rt    *Crew
	mates TeammateSpawner
}

// New returns the Agent tool; make it in the runtime's tool factory
// (Config.Tools), which hands it the runtime. Agent calls run in
// parallel and need no approval themselves; the child's own calls are
// checked. A subagent starts as soon as its call is complete in the
// streamed message; a fork and a teammate wait for the message's end
// (traits).
func NewAgentTool(cfg AgentToolConfig) tool.Tool {
	t := &agentTool{rt: cfg.Runtime, mates: cfg.Teammates}
	return preparing{Tool: tool.New(tool.Spec[AgentInput]{Name: AgentToolName, Description: t.description(), Input: t.schema(),
		TraitsFor: t.traits, Run: t.run, NullAsAbsent: agentNullFields}), t: t}
}

// agentNullFields are the Agent call's fields Claude Code 2.1.332 reads as
// absent when null (its other optional fields refuse null, as Cohort's
// do): cwd, and timeout, which Cohort's Agent does not have.
var agentNullFields = []string{"cwd", "timeout"}

// traits classifies a call: every Agent call is read-only and runs in
// parallel with the others, but a fork copies the whole assistant message
// into its request, and the teammates of one message join their team
// together (prepare), so those two need the whole message before they
// start.
func (t *agentTool) traits(in AgentInput) tool.Traits {
	fork := in.SubagentType == "fork" || (in.SubagentType == "" && t.rt.Flags().Bool(flags.ForkSubagent))
	mate := in.Name != "" && (in.TeamName != "" || t.rt.Flags().Bool(flags.ImplicitTeam))
	return tool.Traits{ReadOnly: true, ConcurrencySafe: true, WholeMessage: fork || mate}
}

// preparing is the Agent tool with its tool.Preparer side.
type preparing struct {
	tool.Tool
	t *agentTool
}

func (p preparing) Prepare(ctx context.Context, env *tool.Env, batch string, calls []tool.Call) func() {
	return p.t.prepare(ctx, env, batch, calls)
}

const agentToolIntro = `Start another agent to carry out a task on its own and report back. Each agent begins with a fresh context: it sees only the prompt you write, so include the goal, the relevant paths and facts you already know, constraints, and what its report should contain.

Use agents for work that is self-contained: a broad search or investigation, an independent change, a review, a verification. For a quick lookup of a known file, use Read or Grep yourself.

- Several Agent calls in one message run concurrently; prefer that when the pieces are independent.
`

// The bullets that differ between the two agent models (agentmodel.go).
const (
	seedWaitBullet = `- run_in_background: true returns at once; you are notified with a <task-notification> when the agent finishes. Without it you wait for the result.
`
	backgroundWaitBullet = `- Agents run in the background: the call returns at once and a <task-notification> brings the agent's final message when it finishes, so go on with other work or end your turn to wait. Set run_in_background: false only when you need the result before you can do anything else.
`
	seedResultBullet = `- The agent's final message is returned to you, not shown to the user; relay what matters.
- Give an agent a name to address it later with SendMessage while it runs.`
	implicitResultBullet = `- The agent's final message is returned to you, not shown to the user; relay what matters.
- This session has one team, made for you. Give an agent a name to make it a teammate: it stays after its first task, shares the task list, talks to you and the others with SendMessage and takes more work from you by name. An agent without a name ends with its report. team_name and mode are ignored.`
)

func (t *agentTool) description() string {
	var b strings.Builder
	b.WriteString(agentToolIntro)
	b.WriteString(t.modelBullets())
	if t.rt.Flags().Bool(flags.AgentListAttachment) {
		b.WriteString("\n\nThe agent types you can choose from are listed in a system reminder in the conversation.")
		return b.String()
	}
	b.WriteString("\n\n")
	b.WriteString(AgentList(t.rt.Catalog()))
	return b.String()
}

func (t *agentTool) schema() tool.Schema {
	bg, name, teamName, mode := t.fieldTexts()
	props := []tool.Property{
		tool.Required("description", tool.String("A short (3-5 word) description of the task.").WithMinLength(1)),
		tool.Required("prompt", tool.String("The complete task for the agent, with all the context it needs.").WithMinLength(1)),
		tool.Optional("subagent_type", tool.String("The type of agent to start (see the list). Defaults to general-purpose.")),
		tool.Optional("model", tool.String("Model for this agent: an alias (opus, sonnet, haiku) or a model id. Defaults to the agent type's model, else yours.")),
		tool.Optional("effort", tool.Enum("Reasoning effort for this agent. Leave it out unless the user or the project's instructions ask for a level; a fork runs at your own effort.", EffortLevels...)),
		tool.Optional("run_in_background", tool.Boolean(bg)),
		tool.Optional("name", tool.String(name)),
		tool.Optional("team_name", tool.String(teamName)),
		tool.Optional("mode", mode),
		tool.Optional("isolation", tool.Enum("Run the agent in its own git worktree, or on a remote worker.", "worktree", "remote")),
	}
	if t.rt.Flags().Bool(flags.AgentCwd) {
		props = append(props, tool.Optional("cwd", tool.String("Working directory for the agent (absolute path).")))
	}
	return tool.Object(props...)
}

// run routes one Agent call to its spawn path, the first that matches:
// teammate (team_name and name, or a name with an implicit team), remote
// (isolation "remote"), background (run_in_background, the
// background_agents flag, or a definition that says background), fork
// (subagent_type "fork", or none with the fork_subagent flag on), else a
// synchronous subagent. Worktree isolation combines with the last three.
// A team_name that cannot apply is ignored (normalize), and the result
// says so.
func (t *agentTool) run(ctx context.Context, env *tool.Env, in AgentInput) (tool.Result, error) {
	parent, ok := t.rt.Lookup(env.Caller.ID)
	if !ok {
		return tool.Result{}, fmt.Errorf("agenttool: the calling agent %q is not registered with the runtime", env.Caller.ID)
	}
	if in.Name != "" && !namePattern.MatchString(in.Name) {
		return tool.Errorf("Invalid agent name %q: a name must match %s (letters, digits, '_' and '-', starting with a letter or digit, at most 64 characters).", in.Name, namePattern), nil
	}
	in, note, err := t.normalize(ctx, parent, in)
	if err != nil {
		return tool.Errorf("%s", err.Error()), nil
	}
	if in.TeamName != "" {
		return t.spawnTeammate(ctx, parent, env, in)
	}
	res, err := t.spawnAgent(ctx, parent, env, in)
	if note != "" && err == nil && !res.IsError {
		res.Content = append(res.Content, llm.Text(note))
	}
	return res, err
}

// spawnAgent runs every path but the teammate's.
func (t *agentTool) spawnAgent(ctx context.Context, parent *Agent, env *tool.Env, in AgentInput) (tool.Result, error) {
	def, errRes := t.resolveType(parent, in)
	if errRes != nil {
		return *errRes, nil
	}
	if in.Isolation == "" && def != nil {
		in.Isolation = def.Isolation // the definition's, when the call names none
	}
	if in.Isolation == "remote" {
		return t.spawnRemote(ctx, parent, env, in, def)
	}
	req := Request{Description: in.Description, Prompt: in.Prompt, Name: in.Name, Def: def,
		Model: in.Model, Effort: in.Effort, Mode: permission.Mode(in.Mode), Isolation: in.Isolation, Cwd: in.Cwd}
	if def != nil {
		req.Background = t.background(in) || def.Background
	}
	s, err := t.rt.Spawn(ctx, parent, env, req)
	if err != nil {
		return tool.Errorf("%s", err.Error()), nil
	}
	if s.Background {
		return asyncLaunched(s.Agent, in, s.Task.State().OutputFile), nil
	}
	st, err := s.Wait(ctx)
	switch {
	case errors.Is(err, task.ErrBackgrounded) && st.MovedByUser:
		return movedByUser(s.Agent, in, st.OutputFile), nil
	case errors.Is(err, task.ErrBackgrounded):
		return asyncLaunched(s.Agent, in, st.OutputFile), nil
	case err != nil:
		return tool.Result{}, err
	}
	return syncResult(s.Agent, st), nil
}

// resolveType picks the definition for a call; nil with no error result
// means the fork path.
func (t *agentTool) resolveType(parent *Agent, in AgentInput) (*agentdef.Definition, *tool.Result) {
	cat := t.rt.Catalog()
	forkOn := t.rt.Flags().Bool(flags.ForkSubagent)
	name := in.SubagentType
	switch {
	case name == "fork" && !forkOn:
		r := tool.Errorf(`subagent_type "fork" needs the fork_subagent flag, which is off. Turn it on with --flag fork_subagent=on (or COHORT_FLAG_FORK_SUBAGENT=on), or choose an agent type: %s.`, typeNames(cat))
		return nil, &r
	case name == "fork", name == "" && forkOn:
		return nil, nil
	case name == "":
		name = agentdef.GeneralPurpose
	}
	def, ok := cat.Get(name)
	if !ok {
		r := tool.Errorf("Unknown subagent_type %q. Available agent types: %s.", name, typeNames(cat))
		return nil, &r
	}
	if pd := parent.Def(); pd != nil && !pd.CanSpawn(def.Name) {
		r := tool.Errorf("This agent may only start these agent types: %s.", strings.Join(pd.AgentTypes, ", "))
		return nil, &r
	}
	return def, nil
}

func typeNames(cat *agentdef.Catalog) string {
	var names []string
	for _, d := range cat.List() {
		names = append(names, d.Name)
	}
	return strings.Join(names, ", ")
}

// spawnRemote runs the agent on a remote worker (package remote): always in
// the background, its result a notification like a local agent's.
func (t *agentTool) spawnRemote(ctx context.Context, parent *Agent, env *tool.Env, in AgentInput, def *agentdef.Definition) (tool.Result, error) {
	req := Request{Description: in.Description, Prompt: in.Prompt, Name: in.Name, Def: def,
		Model: in.Model, Mode: permission.Mode(in.Mode), Isolation: in.Isolation, Background: true}
	tk, err := t.rt.SpawnRemote(ctx, parent, env, req)
	if err != nil {
		return tool.Errorf("%s", err.Error()), nil
	}
	st := tk.State()
	l := AgentLaunched{Status: "async_launched", AgentID: tk.ID(), Description: in.Description, Prompt: in.Prompt, OutputFile: st.OutputFile}
	text := fmt.Sprintf("The agent was sent to a remote worker (agentId: %s). You will get a <task-notification> when it finishes; do not wait or poll for it, continue with other work. Its changes come back on branch cohort/remote-%s.", tk.ID(), tk.ID())
	return tool.Result{Content: []llm.Block{llm.Text(text)}, Meta: l}, nil
}
