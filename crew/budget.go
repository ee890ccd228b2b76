package crew

import (
	"fmt"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/budget"
	"github.com/cohort-dev/cohort/engine"
)

// account returns a's spend account, made on first use: below its team's
// for a teammate, else below the account of the agent that spawned it
// (the session's for the lead and for agents whose spawner is not in this
// process), with its definition's caps, clamped to the session's. So what
// a subagent spends counts against its spawner's cap too, and spawning
// agents is no way past a cap.
func (rt *Crew) account(a *Agent) *budget.Account {
	l := rt.cfg.Budget
	if l == nil {
		return nil
	}
	a.mu.Lock()
	acc, info := a.account, a.info
	spent := budget.Spend{Tokens: a.spent.Total(), USD: a.spentUS}
	a.mu.Unlock()
	if acc != nil {
		return acc
	}
	above := l.Session()
	switch {
	case info.Team != "":
		above = l.Team(info.Team)
	case info.ParentID != "":
		if p, ok := rt.Lookup(info.ParentID); ok {
			p.mu.Lock()
			if p.account != nil {
				above = p.account
			}
			p.mu.Unlock()
		}
	}
	caps := DefinitionCaps(a.def)
	caps, _ = caps.Clamp(l.Session().Caps())
	acc = above.Child(caps, spent)
	a.mu.Lock()
	if a.account == nil {
		a.account = acc
	}
	acc = a.account
	a.mu.Unlock()
	return acc
}

// DefinitionCaps are the caps an agent definition sets (maxBudgetUsd,
// maxTokens), labelled with the definition and where it was read.
func DefinitionCaps(d *agentdef.Definition) budget.Caps {
	if d == nil || (d.MaxBudgetUSD <= 0 && d.MaxTokens <= 0) {
		return budget.Caps{}
	}
	label := fmt.Sprintf("the budget of agent type %q", d.Name)
	if d.Source.Path != "" {
		label += " (" + d.Source.Path + ")"
	}
	return budget.Caps{USD: d.MaxBudgetUSD, Tokens: d.MaxTokens, Label: label}
}

// Caps returns a's caps: its definition's (clamped to the session's), or
// for the lead the session's, which cover every agent.
func (a *Agent) Caps() budget.Caps {
	a.mu.Lock()
	acc := a.account
	a.mu.Unlock()
	if acc == nil {
		return budget.Caps{}
	}
	if a.role == agentdef.RoleMain {
		return a.rt.cfg.Budget.Session().Caps()
	}
	return acc.Caps()
}

// CapNote is what an agent's result says when it stopped at a cap: which
// cap, and what the agent spent.
func CapNote(res *engine.Result) string {
	why := "a spend cap was reached"
	if res.Capped != nil {
		why = res.Capped.Error()
	}
	return fmt.Sprintf("[The agent stopped before finishing: %s. It spent %s in %d requests.]", why, budget.USD(res.CostUSD), res.Turns)
}
