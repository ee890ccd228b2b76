package cohort

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/remote"
)

// RemoteRunner is how a worker (cohort worker) runs each remote job: as a
// Session in the job's fresh clone, its lead running the job's agent
// definition on the job's prompt, configured from base — the worker's own
// provider, key, base URL and home — and the job as the worker's policy
// capped it.
//
// Whatever the clone holds is the lead's code, not the worker's
// configuration: the session reads only the worker's user settings (never
// the project's or local settings files of the clone, whose hooks would
// run outside the sandbox), starts no MCP servers but the worker's own
// (StrictMCPConfig), and keeps the Bash sandbox on. A session that cannot
// start (no model key on the worker, an unknown provider) fails the job
// with that reason.
func RemoteRunner(base Config) remote.Runner {
	return func(ctx context.Context, job *remote.Job, run *remote.Run, dir string, progress func(remote.Progress)) (remote.Outcome, error) {
		cfg := base
		cfg.Dir = dir
		cfg.Model = run.Model
		cfg.PermissionMode = string(run.Mode)
		cfg.AllowedTools, cfg.DisallowedTools = run.Allow, run.Deny
		cfg.ToolPool = append([]string{}, run.Tools...)
		cfg.MaxTurns = run.MaxTurns
		cfg.Sandbox = "on"
		cfg.remoteClone = true
		cfg.StopAfterRun = true
		cfg.SettingSources = []string{"user"}
		cfg.StrictMCPConfig = true
		cfg.Resume, cfg.Continue, cfg.SessionID, cfg.ForkSession, cfg.Role = "", false, "", false, Role{}
		agents, err := remoteAgents(run.Definition)
		if err != nil {
			return remote.Outcome{}, err
		}
		cfg.Agents, cfg.Agent = agents, run.Definition.Name
		s, err := New(ctx, cfg)
		if err != nil {
			return remote.Outcome{}, fmt.Errorf("the worker cannot start the agent: %w", err)
		}
		defer func() {
			_ = s.Close()
			// The job's transcripts and memory live under a project dir
			// named after its clone, which is gone after the job: a worker
			// that runs thousands of jobs keeps none of them.
			if s.projectDir != "" && strings.HasPrefix(s.projectDir, filepath.Join(s.env.CohortHome, "projects")+string(filepath.Separator)) {
				_ = os.RemoveAll(s.projectDir)
			}
		}()
		return runRemote(ctx, s, job.Prompt, progress)
	}
}

// runRemote runs one prompt to its result, reporting the lead's tool
// calls as progress.
func runRemote(ctx context.Context, s *Session, prompt string, progress func(remote.Progress)) (remote.Outcome, error) {
	var oc remote.Outcome
	var last llm.Usage
	for ev, err := range s.Run(ctx, prompt) {
		if err != nil {
			return oc, err
		}
		switch ev.Type {
		case EventAssistant:
			if ev.Message == nil || ev.ParentToolUseID != "" {
				continue // a subagent's; the job's agent is the lead
			}
			if ev.Message.Usage != nil {
				last = *ev.Message.Usage
				oc.Usage.OutputTokens += last.OutputTokens
			}
			for _, b := range ev.Message.Content {
				if b.Type != llm.BlockToolUse {
					continue
				}
				oc.Usage.ToolUses++
				progress(remote.Progress{Tool: b.Name, Description: toolSummary(b.Input),
					InputTokens:  last.InputTokens + last.CacheReadInputTokens + last.CacheCreationInputTokens,
					OutputTokens: oc.Usage.OutputTokens, ToolUses: oc.Usage.ToolUses})
			}
		case EventResult:
			oc.Text, oc.Usage.Turns = ev.Result, ev.NumTurns
			if ev.Usage != nil {
				oc.Usage.InputTokens = ev.Usage.InputTokens + ev.Usage.CacheReadInputTokens + ev.Usage.CacheCreationInputTokens
				oc.Usage.OutputTokens = ev.Usage.OutputTokens
				oc.Usage.TotalTokens = oc.Usage.InputTokens + oc.Usage.OutputTokens
			}
			if ev.IsError {
				return oc, errors.New(firstNonEmpty(ev.Result, "the agent ended in an error ("+ev.Subtype+")"))
			}
		}
	}
	return oc, nil
}

// remoteAgents renders a job's definition as --agents JSON.
func remoteAgents(d remote.Definition) (string, error) {
	entry := map[string]any{"description": firstNonEmpty(d.Description, "remote agent"), "prompt": d.Prompt}
	if len(d.Tools) > 0 {
		entry["tools"] = d.Tools
	}
	if len(d.DisallowedTools) > 0 {
		entry["disallowedTools"] = d.DisallowedTools
	}
	if d.Model != "" {
		entry["model"] = d.Model
	}
	if d.PermissionMode != "" {
		entry["permissionMode"] = d.PermissionMode
	}
	if d.MaxTurns > 0 {
		entry["maxTurns"] = d.MaxTurns
	}
	b, err := json.Marshal(map[string]any{d.Name: entry})
	return string(b), err
}

// toolSummary is a short line for a tool call's input: its path, command
// or pattern when it has one.
func toolSummary(input json.RawMessage) string {
	var in map[string]any
	if json.Unmarshal(input, &in) != nil {
		return ""
	}
	for _, k := range []string{"description", "file_path", "command", "pattern", "path"} {
		if s, ok := in[k].(string); ok && s != "" {
			if len(s) > 120 {
				s = s[:120] + "…"
			}
			return s
		}
	}
	return ""
}
