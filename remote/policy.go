package remote

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/permission"
)

// Policy is a worker's own limit on every job it runs. A job's settings
// can ask for less, never for more: Apply caps what it can and refuses
// what it cannot.
type Policy struct {
	// Tools are the tools a job's agent may have. A job's definition is
	// narrowed to them; a job that names none gets all of them. Empty
	// means DefaultTools.
	Tools []string
	// MaxMode is the highest permission mode a job runs in (default
	// acceptEdits). Jobs run headless, so what would ask is denied.
	MaxMode string
	// MaxTurns and WallTime bound each job (defaults 50 turns, 30
	// minutes); a job asking for more, or for no limit, gets these.
	MaxTurns int
	WallTime time.Duration
	// MaxBudgetUSD is the most one job may spend on its model, in US
	// dollars (0: only the lead's caps, which every job carries); a job
	// asking for more, or for no cap, gets this.
	MaxBudgetUSD float64
	// Models are the model ids or aliases a job may ask for (aliases match
	// their ids; "*" matches any); a job asking for another is refused.
	// Empty means DefaultModel only.
	Models []string
	// DefaultModel is what a job that names no model runs on (default
	// sonnet).
	DefaultModel string
	// Allow are the worker's own allow rules, added to every job ("Bash(go
	// test:*)"); a job's allow rules are kept only for tools in Tools.
	Allow []string
}

// TeamTools are added to a teammate spawn's tools whatever the policy
// says: without them it cannot claim a task or answer its lead.
var TeamTools = []string{"SendMessage", "TaskCreate", "TaskGet", "TaskUpdate", "TaskList"}

// DefaultTools is a worker's tool set unless its policy says otherwise:
// the tools of a background agent, less the web.
var DefaultTools = []string{"Read", "Grep", "Glob", "Bash", "Edit", "Write", "NotebookEdit", "TodoWrite"}

// withDefaults fills the zero fields.
func (p Policy) withDefaults() Policy {
	if len(p.Tools) == 0 {
		p.Tools = DefaultTools
	}
	if p.MaxMode == "" {
		p.MaxMode = string(permission.ModeAcceptEdits)
	}
	if p.MaxTurns <= 0 {
		p.MaxTurns = 50
	}
	if p.WallTime <= 0 {
		p.WallTime = 30 * time.Minute
	}
	if p.DefaultModel == "" {
		p.DefaultModel = "sonnet"
	}
	if len(p.Models) == 0 {
		p.Models = []string{p.DefaultModel}
	}
	return p
}

// Validate checks the policy itself (a worker's flags or file).
func (p Policy) Validate() error {
	if p.MaxBudgetUSD < 0 {
		return fmt.Errorf("worker policy max budget %v: a budget is a number of US dollars above 0 (0 for none)", p.MaxBudgetUSD)
	}
	if p.MaxMode != "" {
		if _, err := permission.ParseMode(p.MaxMode); err != nil {
			return fmt.Errorf("worker policy max mode: %w", err)
		}
	}
	for _, r := range p.Allow {
		if _, err := permission.ParseRule(r); err != nil {
			return fmt.Errorf("worker policy allow rule: %w", err)
		}
	}
	return nil
}

// Run is what a worker runs for a job after its policy has capped it.
type Run struct {
	Definition Definition
	Model      string
	Mode       permission.Mode
	Tools      []string
	Allow      []string
	Deny       []string
	MaxTurns   int
	WallTime   time.Duration
	// MaxBudgetUSD caps the job's model spend (0: none).
	MaxBudgetUSD float64
	// Capped says, one sentence each, what the policy lowered; it goes
	// into the job's result, so the lead's model learns why.
	Capped []string
}

// Apply caps j to the policy. It refuses (a *Refusal) what cannot be
// capped without changing the job's meaning: a model the worker does not
// offer, a definition none of whose tools the worker allows, bad rules or
// modes.
func (p Policy) Apply(j *Job) (*Run, error) {
	p = p.withDefaults()
	r := &Run{Definition: j.Definition}
	capf := func(format string, args ...any) { r.Capped = append(r.Capped, fmt.Sprintf(format, args...)) }

	r.Model = j.Model
	if r.Model == "" || r.Model == "inherit" {
		r.Model = j.Definition.Model
	}
	if r.Model == "" || r.Model == "inherit" {
		r.Model = p.DefaultModel
	}
	resolved := agentdef.ResolveAlias(r.Model, nil)
	if !slices.ContainsFunc(p.Models, func(m string) bool { return m == "*" || agentdef.ResolveAlias(m, nil) == resolved }) {
		return nil, &Refusal{Reason: fmt.Sprintf("model %q is not offered by this worker (it runs %s)", r.Model, strings.Join(p.Models, ", "))}
	}
	r.Definition.Model = r.Model

	mode, err := jobMode(j)
	if err != nil {
		return nil, err
	}
	if ceiling := permission.Mode(p.MaxMode); mode.Exceeds(ceiling) {
		capf("permission mode %s lowered to %s, this worker's ceiling", mode, ceiling)
		mode = ceiling
	}
	r.Mode = mode
	r.Definition.PermissionMode = string(mode)

	r.Tools = p.Tools
	if asked := j.Definition.Tools; len(asked) > 0 && !slices.Contains(asked, "*") {
		r.Tools = nil
		var dropped []string
		for _, t := range asked {
			if slices.Contains(p.Tools, t) {
				r.Tools = append(r.Tools, t)
			} else {
				dropped = append(dropped, t)
			}
		}
		if len(r.Tools) == 0 {
			return nil, &Refusal{Reason: fmt.Sprintf("none of the tools the job asks for (%s) is allowed on this worker (%s)", strings.Join(asked, ", "), strings.Join(p.Tools, ", "))}
		}
		if len(dropped) > 0 {
			capf("tools %s removed: this worker allows %s", strings.Join(dropped, ", "), strings.Join(p.Tools, ", "))
		}
	}
	if j.Teammate != nil {
		// A teammate talks to its team: these tools touch only the team's
		// mailboxes and task list on NATS, nothing of the worker's.
		for _, t := range TeamTools {
			if !slices.Contains(r.Tools, t) {
				r.Tools = append(r.Tools, t)
			}
		}
	}
	r.Definition.Tools = r.Tools

	r.Allow = slices.Clone(p.Allow)
	for _, s := range j.Settings.Allow {
		rule, err := permission.ParseRule(s)
		if err != nil {
			return nil, &Refusal{Reason: fmt.Sprintf("allow rule: %v", err)}
		}
		if !slices.Contains(r.Tools, rule.Tool) {
			capf("allow rule %s dropped: tool %s is not allowed on this worker", s, rule.Tool)
			continue
		}
		r.Allow = append(r.Allow, s)
	}
	for _, s := range j.Settings.Deny {
		if _, err := permission.ParseRule(s); err != nil {
			return nil, &Refusal{Reason: fmt.Sprintf("deny rule: %v", err)}
		}
	}
	r.Deny = slices.Clone(j.Settings.Deny)

	r.MaxTurns = firstPositive(j.Settings.MaxTurns, j.Definition.MaxTurns)
	switch {
	case r.MaxTurns == 0:
		r.MaxTurns = p.MaxTurns
	case r.MaxTurns > p.MaxTurns:
		capf("max turns %d lowered to %d", r.MaxTurns, p.MaxTurns)
		r.MaxTurns = p.MaxTurns
	}
	r.Definition.MaxTurns = r.MaxTurns

	r.WallTime = time.Duration(j.Settings.WallTime)
	switch {
	case r.WallTime <= 0:
		r.WallTime = p.WallTime
	case r.WallTime > p.WallTime:
		capf("wall time %s lowered to %s", r.WallTime, p.WallTime)
		r.WallTime = p.WallTime
	}

	switch b := j.Settings.MaxBudgetUSD; {
	case b < 0:
		return nil, &Refusal{Reason: fmt.Sprintf("max_budget_usd %v: a budget is a number of US dollars above 0", b)}
	case p.MaxBudgetUSD > 0 && (b == 0 || b > p.MaxBudgetUSD):
		if b > 0 {
			capf("budget $%.4f lowered to $%.4f", b, p.MaxBudgetUSD)
		}
		r.MaxBudgetUSD = p.MaxBudgetUSD
	default:
		r.MaxBudgetUSD = b
	}

	switch j.Settings.Sandbox {
	case "", "on":
	case "off":
		capf("sandbox stays on: this worker runs every Bash call in the kernel sandbox")
	default:
		return nil, &Refusal{Reason: fmt.Sprintf("sandbox %q: want on or off", j.Settings.Sandbox)}
	}
	return r, nil
}

// jobMode is the mode a job asks for: its settings', else its
// definition's, else default.
func jobMode(j *Job) (permission.Mode, error) {
	s := j.Settings.Mode
	if s == "" {
		s = j.Definition.PermissionMode
	}
	if s == "" {
		return permission.ModeDefault, nil
	}
	m, err := permission.ParseMode(s)
	if err != nil {
		return "", &Refusal{Reason: err.Error()}
	}
	return m, nil
}

func firstPositive(vs ...int) int {
	for _, v := range vs {
		if v > 0 {
			return v
		}
	}
	return 0
}
