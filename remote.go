package cohort

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/cohort-dev/cohort/internal/assemble"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/remote"
)

// LeadSigner returns the key this machine signs remote jobs with (made on
// first use, mode 0600, in $COHORT_HOME/remote/lead.key), named
// cfg.Remote.KeyName on the workers. Its PublicKey line is what a
// worker's trust file needs.
func LeadSigner(cfg Config) (*remote.Signer, error) {
	s, err := assemble.LeadSigner(cfg.plan())
	return s, configError(err)
}

// DefaultTrustFile is where a worker looks for the leads it trusts when it
// is given no trust file.
func DefaultTrustFile(cfg Config) (string, error) {
	path, err := assemble.TrustFile(cfg.plan())
	return path, configError(err)
}

// RemoteNATS is the NATS side of cfg.Remote, for a worker.
func RemoteNATS(cfg Config) (remote.Config, remote.Queue) { return assemble.WorkerNATS(cfg.plan()) }

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
// with that reason. A teammate spawn (job.Teammate) runs that member of a
// team on NATS, joined from its server, until its lead shuts it down.
func RemoteRunner(base Config) remote.Runner {
	return func(ctx context.Context, job *remote.Job, run *remote.Run, dir string, progress func(remote.Progress)) (remote.Outcome, error) {
		cfg := base
		cfg.Dir, cfg.Model, cfg.PermissionMode, cfg.MaxTurns, cfg.MaxBudgetUSD = dir, run.Model, string(run.Mode), run.MaxTurns, run.MaxBudgetUSD
		cfg.AllowedTools, cfg.DisallowedTools, cfg.ToolPool = run.Allow, run.Deny, append([]string{}, run.Tools...)
		cfg.Sandbox, cfg.StopAfterRun, cfg.SettingSources, cfg.StrictMCPConfig = "on", true, []string{"user"}, true
		cfg.Resume, cfg.Continue, cfg.SessionID, cfg.ForkSession, cfg.Role = "", false, "", false, Role{}
		agents, err := run.Definition.AgentsJSON()
		if err != nil {
			return remote.Outcome{}, err
		}
		cfg.Agents, cfg.Agent = agents, run.Definition.Name
		prompt := job.Prompt
		if tm := job.Teammate; tm != nil { // a teammate spawn: the member runs until its lead shuts it down
			if err := assemble.JoinTeam(ctx, cfg.plan(), tm, run.Mode); err != nil {
				return remote.Outcome{}, err
			}
			cfg.Role, cfg.Agent, prompt = Role{Team: tm.Team, Name: tm.Member}, "", ""
		}
		s, err := newSession(ctx, cfg, true) // its git dir stays writable: the agent commits

		if err != nil {
			return remote.Outcome{}, fmt.Errorf("the worker cannot start the agent: %w", err)
		}
		defer func() { _ = s.Close(); assemble.DropJobProject(s.parts) }()
		return runRemote(ctx, s, prompt, progress)
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
				progress(remote.Progress{Tool: b.Name, Description: remote.Summary(b.Input),
					InputTokens:  last.InputTokens + last.CacheReadInputTokens + last.CacheCreationInputTokens,
					OutputTokens: oc.Usage.OutputTokens, ToolUses: oc.Usage.ToolUses})
			}
		case EventResult:
			oc.Text, oc.Usage.Turns, oc.Usage.CostUSD = ev.Result, ev.NumTurns, ev.TotalCostUSD
			if ev.Usage != nil {
				oc.Usage.InputTokens = ev.Usage.InputTokens + ev.Usage.CacheReadInputTokens + ev.Usage.CacheCreationInputTokens
				oc.Usage.OutputTokens = ev.Usage.OutputTokens
				oc.Usage.TotalTokens = oc.Usage.InputTokens + oc.Usage.OutputTokens
			}
			if ev.IsError && ev.Subtype != "error_max_budget_usd" { // capped: its text says so, its work comes back
				return oc, errors.New(cmp.Or(ev.Result, "the agent ended in an error ("+ev.Subtype+")"))
			}
		}
	}
	return oc, nil
}
