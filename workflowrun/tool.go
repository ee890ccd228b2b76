package workflowrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cohort-dev/cohort/internal/ownread"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/workflow/host"
)

// Name is the Workflow tool's name (Claude Code's).
const Name = "Workflow"

// Input is the Workflow tool's input, with Claude Code's field names.
type Input struct {
	Script          string          `json:"script,omitempty"`
	Name            string          `json:"name,omitempty"`
	ScriptPath      string          `json:"scriptPath,omitempty"`
	Args            json.RawMessage `json:"args,omitempty"`
	ResumeFromRunID string          `json:"resumeFromRunId,omitempty"`
}

// Tool is the Workflow tool.
type Tool struct {
	cfg Config
}

// New returns the Workflow tool; make it in the runtime's tool factory.
// Its calls are not read-only (its agents change things), so outside the
// permissive modes they ask, and the prompt shows what the script says it
// does.
func New(cfg Config) tool.Tool {
	t := &Tool{cfg: cfg}
	return describing{Tool: tool.New(tool.Spec[Input]{Name: Name, Description: description, Input: schema(),
		Traits: tool.Traits{ConcurrencySafe: true}, Run: t.run}), t: t}
}

// describing is the tool with its tool.PromptDescriber side.
type describing struct {
	tool.Tool
	t *Tool
}

func (d describing) DescribePrompt(ctx context.Context, env *tool.Env, input json.RawMessage) string {
	return d.t.describePrompt(ctx, env, input)
}

// PermissionPaths is the script a call reads (scriptPath), so that Read
// deny rules apply to it like to a Read of the file (permission.Pather).
func (d describing) PermissionPaths(input json.RawMessage) ([]string, error) {
	var in Input
	if err := json.Unmarshal(input, &in); err != nil {
		return nil, err
	}
	if in.ScriptPath == "" {
		return nil, nil
	}
	return []string{in.ScriptPath}, nil
}

const description = `Run a workflow script in the background: a small JavaScript program whose control flow (loops, conditions, fan-out, pipelines, checks by other agents) is fixed in code and whose steps are subagents.

Only use this tool when the user has explicitly asked for a workflow: named a saved one, asked you to write or run one, or asked to resume a run. For ordinary delegation, even of many parallel pieces, use the Agent tool instead; do not pick Workflow on your own.

Give exactly one of script (the source), name (a saved workflow in .claude/workflows/ or .cohort/workflows/) or scriptPath (a file). The call returns at once with a run id and the path where the run's copy of the script is kept; a <task-notification> with the script's return value and its cost per phase arrives when it ends. To change a run, edit that file and call Workflow with resumeFromRunId: steps whose inputs did not change are answered from the run's journal, and the rest run live.

The script starts with a pure literal: export const meta = {name, description, whenToUse?, phases?: [{title, detail?, model?}]}. Top-level await works. Globals:
- agent(prompt, {label?, phase?, schema?, model?, isolation?: 'worktree' | 'remote', agentType?}) → Promise of the agent's final text, or with a JSON Schema the validated object; null when it failed.
- pipeline(items, stage1, stage2, …): each item goes through the stages on its own; a stage gets (previous, item, index); a stage that throws turns its item into null.
- parallel([() => …, …]): waits for all; failures become null.
- phase(title), log(message), args (this call's args), budget {total, spent(), remaining()}, workflow(name, args) to run a saved workflow inside this one.
Date.now(), Math.random() and new Date() throw (scripts must replay deterministically); there is no file or process access.`

func schema() tool.Schema {
	return tool.Object(
		tool.Optional("script", tool.String("The workflow script's source.")),
		tool.Optional("name", tool.String("The name of a saved workflow (its file name without .js).")),
		tool.Optional("scriptPath", tool.String("Path to a workflow script file.")),
		tool.Optional("args", tool.Schema{Description: "Passed to the script as `args`, unchanged (any JSON value)."}),
		tool.Optional("resumeFromRunId", tool.String("Resume this earlier run from its journal, rerunning only new, changed, failed or unfinished steps.")),
	)
}

// resolve finds the script a call names: its source and a name for
// messages (a path, or "workflow.js" for an inline script).
func (t *Tool) resolve(env *tool.Env, in Input) (Launch, error) {
	l := Launch{Args: in.Args, ResumeRunID: in.ResumeFromRunID}
	given := 0
	for _, s := range []string{in.Script, in.Name, in.ScriptPath} {
		if s != "" {
			given++
		}
	}
	switch {
	case given > 1:
		return l, tool.Failf("Give only one of script, name and scriptPath.")
	case given == 0 && in.ResumeFromRunID == "":
		return l, tool.Failf("Give one of script, name or scriptPath (or resumeFromRunId to resume a run).")
	case in.Script != "":
		l.Source, l.Name = in.Script, "workflow.js"
		return l, nil
	case in.Name != "":
		path, err := host.FindSaved(in.Name, t.cfg.Roots...)
		if err != nil {
			return l, tool.Failf("%v.", err)
		}
		return readScript(l, path, env.DeniedRead)
	case in.ScriptPath != "":
		path := in.ScriptPath
		if !filepath.IsAbs(path) {
			path = filepath.Join(env.Cwd, path)
		}
		if env.DeniedRead(path) {
			// Below the permission check, which has the same rule: the
			// script's text would reach the model in a load error.
			return l, tool.Failf("Cannot read the workflow script %s: a Read deny rule covers it (or it cannot be checked against one).", path)
		}
		return readScript(l, path, env.DeniedRead)
	}
	return l, nil
}

// maxScript bounds a workflow script the model names.
const maxScript = 4 << 20

// readScript reads the script judged on what was opened (ownread.Text):
// the deny check above goes by the name, and a link the model flips
// between that check and this read, or one into /proc, or a FIFO that
// would block the call, is refused here.
func readScript(l Launch, path string, denied func(string) bool) (Launch, error) {
	src, err := ownread.Text(path, maxScript, denied)
	if err != nil {
		return l, tool.Failf("Cannot read the workflow script: %v.", err)
	}
	l.Source, l.Name = string(src), path
	return l, nil
}

func (t *Tool) run(ctx context.Context, env *tool.Env, in Input) (tool.Result, error) {
	parent, ok := t.cfg.Runtime.Lookup(env.Caller.ID)
	if !ok {
		return tool.Result{}, fmt.Errorf("workflowrun: the calling agent %q is not registered with the runtime", env.Caller.ID)
	}
	l, err := t.resolve(env, in)
	if err != nil {
		return tool.Result{}, err
	}
	r, err := Start(ctx, t.cfg, parent, *env, l)
	if errors.Is(err, host.ErrNoHost) {
		return tool.Result{}, tool.Failf("Workflows are not available: %v.", err)
	}
	if err != nil {
		return tool.Result{}, err
	}
	verb := "started"
	if in.ResumeFromRunID != "" {
		verb = "resumed"
	}
	text := fmt.Sprintf("Workflow %q %s in the background.\nRun id: %s (TaskOutput and TaskStop take it)\nScript: %s\n\nYou will get a <task-notification> with its return value when it ends; do not poll it. To change the run, edit the script file and call Workflow with resumeFromRunId %q.",
		r.Meta.Name, verb, r.ID, r.Script, r.ID)
	return tool.Result{Content: tool.Text(text).Content,
		Response: map[string]any{"runId": r.ID, "scriptPath": r.Script, "status": "async_launched"}}, nil
}

// describePrompt is what the permission prompt shows first: the script's
// description and a cost estimate, or why it could not be read.
func (t *Tool) describePrompt(ctx context.Context, env *tool.Env, input json.RawMessage) string {
	var in Input
	if err := json.Unmarshal(input, &in); err != nil {
		return ""
	}
	l, err := t.resolve(env, in)
	if err == nil && l.Source == "" && in.ResumeFromRunID != "" {
		dir, derr := t.cfg.runDir(in.ResumeFromRunID)
		if derr != nil {
			return fmt.Sprintf("Workflow: cannot resume %s: %v.", in.ResumeFromRunID, derr)
		}
		l, err = readScript(l, filepath.Join(dir, host.ScriptName), nil)
	}
	if err != nil {
		return "Workflow: " + err.Error()
	}
	c, err := host.Check(ctx, t.cfg.Host, host.CheckRequest{Name: l.Name, Source: l.Source})
	if err != nil {
		return "Workflow: the script does not load: " + err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Workflow %q: %s", c.Meta.Name, c.Meta.Description)
	if est := t.estimate(env, c); est != "" {
		b.WriteString("\n" + est)
	}
	return b.String()
}
