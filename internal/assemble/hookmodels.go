package assemble

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/hook"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/transcript"
)

// Limits of the model-backed hooks: a prompt hook's answer is short, and
// an agent hook reads a few files before it answers.
const (
	hookMaxTokens  = 1024
	hookAgentTurns = 12
)

// hookAgentTools are what an agent hook may use: reading only.
var hookAgentTools = []string{"Read", "Grep", "Glob"}

// hookModels runs prompt and agent hooks on the session's model client.
// Their conversations have no hooks of their own (a hook that fires hooks
// could loop), no transcript, and nobody to ask: an agent hook's calls are
// checked against the session's permission rules and refused unless they
// allow them outright.
type hookModels struct{ s *Session }

var _ hook.Models = hookModels{}

// model is the hook's model, else haiku, resolved through the session's
// aliases.
func (h hookModels) model(name string) string {
	return agentdef.ResolveAlias(cmp.Or(name, "haiku"), h.s.model.aliases)
}

func (h hookModels) Prompt(ctx context.Context, req hook.ModelRequest) (string, error) {
	return h.run(ctx, req, nil, 1)
}

func (h hookModels) Agent(ctx context.Context, req hook.ModelRequest) (string, error) {
	var tools []tool.Tool
	if h.s.rt != nil {
		for _, t := range h.s.rt.Tools() {
			if slices.Contains(hookAgentTools, t.Def().Name) {
				tools = append(tools, t)
			}
		}
	}
	return h.run(ctx, req, tools, hookAgentTurns)
}

func (h hookModels) run(ctx context.Context, req hook.ModelRequest, tools []tool.Tool, turns int) (string, error) {
	if h.s.model == nil || h.s.model.model == nil {
		return "", errors.New("no model client")
	}
	cfg := engine.Config{Model: h.s.model.model, ModelName: h.model(req.Model), System: []llm.Block{llm.Text(req.System)},
		Tools: tools, MaxTokens: hookMaxTokens, MaxTurns: turns, Prices: h.s.model.prices,
		Env:        tool.Env{Caller: tool.Caller{ID: "hook", Type: "hook", Cwd: req.Cwd}, SessionID: h.s.id},
		Compaction: engine.Compaction{Disabled: true}}
	if len(tools) > 0 {
		if h.s.checker == nil {
			return "", errors.New("no permission rules to check an agent hook's reads against")
		}
		cfg.Env.Access = h.s.checker
		cfg.Gate = hookAgentGate{checker: h.s.checker}
	}
	res, err := engine.New(cfg).Send(ctx, []llm.Block{llm.Text(req.Prompt)}, transcript.OriginSystem)
	if err != nil {
		return "", err
	}
	if res.Stop != engine.StopSuccess {
		return res.Text, fmt.Errorf("the hook's model stopped early (%s)", res.Stop)
	}
	return res.Text, nil
}

// hookAgentGate lets an agent hook's read-only calls through when they
// stay inside the session's working directories and the session's rules
// allow them without asking; everything else is refused. The hook's
// prompt may come from the repository's own settings, so its agent reads
// less than the session's agents may: nothing in the user's home or
// elsewhere outside the project.
type hookAgentGate struct{ checker *permission.Checker }

func (g hookAgentGate) Check(ctx context.Context, c *engine.Call) engine.Verdict {
	if !slices.Contains(hookAgentTools, c.Name) || !c.Traits.ReadOnly {
		return engine.Verdict{Reason: "a hook's agent may only read (Read, Grep, Glob)"}
	}
	req := permission.Request{Tool: c.Name, Input: c.Input, ReadOnly: true, Cwd: c.Env.Cwd, ToolUseID: c.ID}
	paths, ok, err := permission.PathsOf(c.Name, c.Input)
	switch {
	case !ok:
		return engine.Verdict{Reason: "a hook's agent may only use tools whose paths can be checked"}
	case err != nil:
		return engine.Verdict{Reason: "the permission check could not read the call's paths: " + err.Error()}
	}
	for _, path := range paths {
		if !underAny(path, c.Env.Cwd, g.checker.WorkingDirs()) {
			return engine.Verdict{Reason: "a hook's agent reads only inside the session's working directories, not " + path}
		}
	}
	req.Paths = paths
	if d := g.checker.Check(ctx, req); d.Behavior != permission.Allow {
		return engine.Verdict{Reason: "the session's permissions do not let a hook's agent read this without asking, and nobody is asked: " + d.Reason}
	}
	return engine.Verdict{Allow: true, Confinement: tool.ConfineReadOnly}
}

// underAny reports whether path (relative ones against cwd) is one of
// dirs or inside one, after symlinks (where the path exists). A path that
// starts with "~" is never inside: the file tools read it in the home
// directory.
func underAny(path, cwd string, dirs []string) bool {
	if strings.HasPrefix(path, "~") {
		return false
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(cwd, path)
	}
	path = realPath(path)
	for _, d := range dirs {
		rel, err := filepath.Rel(realPath(d), path)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return true
		}
	}
	return false
}

// realPath is p cleaned, with symlinks resolved when it exists.
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}
