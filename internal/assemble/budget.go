package assemble

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	"github.com/cohort-dev/cohort/budget"
	"github.com/cohort-dev/cohort/crew"
)

// Spend caps (package budget). The session's cap is Plan.Lead.MaxBudgetUSD
// when set, else the settings' maxBudgetUsd; every team's is the
// settings' teamMaxBudgetUsd (a team is made by a model at run time, so
// its cap comes from the user's settings, never from TeamCreate's input).
// Where several settings files set one, the smallest holds: a project's
// file can lower the user's cap, never raise it. A cap that is not a
// positive number is a *FieldError naming the file and line. A
// definition's cap above the session's is held to it, with a warning.

// sessionCaps resolves the session's and the teams' caps from the plan
// and the settings.
func (p *Plan) sessionCaps() (session, team budget.Caps, err error) {
	if v := p.Lead.MaxBudgetUSD; v != 0 {
		if !budget.ValidUSD(v) {
			return session, team, fieldErr("MaxBudgetUSD", "Config.MaxBudgetUSD %v: a budget is a number of US dollars above 0 (0 for none)", v)
		}
		session = budget.Caps{USD: v, Label: "the session's budget"}
	} else if session, err = p.settingCap("maxBudgetUsd", "the session's budget"); err != nil {
		return session, team, err
	}
	team, err = p.settingCap("teamMaxBudgetUsd", "budget")
	return session, team, err
}

// settingCap reads a dollar cap from the settings: the smallest any file
// sets.
func (p *Plan) settingCap(key, noun string) (budget.Caps, error) {
	var caps budget.Caps
	for _, sec := range p.Settings.Loaded.Section(key) {
		var v float64
		if json.Unmarshal(sec.Value, &v) != nil || !budget.ValidUSD(v) {
			return caps, fieldErr("Settings", "%s:%d:%d: %s: want a number of US dollars above 0, such as 5 or 0.50, got %s; fix or remove it",
				sec.Source.Path, sec.Line, sec.Col, key, sec.Value)
		}
		if caps.USD == 0 || v < caps.USD {
			caps = budget.Caps{USD: v, Label: fmt.Sprintf("%s (%s in %s)", noun, key, sec.Source.Path)}
		}
	}
	return caps, nil
}

// openBudget opens the session's ledger: the lead's records the caps,
// a teammate's process joins its lead's (they share the session id). A
// remote job's session keeps its ledger in memory.
func (s *Session) openBudget(ctx context.Context, lead bool) error {
	sessionCaps, teamCaps, err := s.sessionCaps()
	if err != nil {
		return err
	}
	path := budget.Path(s.Process.Paths.CohortHome, s.id)
	if s.Disposable {
		path = ""
	}
	l, err := budget.Open(ctx, path)
	if err != nil {
		return err
	}
	s.budget = l
	s.closers = append(s.closers, func() {
		if err := l.Close(); err != nil {
			fmt.Fprintf(s.Process.Stderr, "cohort: warning: %v\n", err)
		}
	})
	if !lead {
		return nil
	}
	if from := s.Plan.Session.ForkFrom; from != "" {
		if err := l.Inherit(ctx, budget.Path(s.Process.Paths.CohortHome, from)); err != nil {
			return err
		}
	}
	if err := l.SetCaps(ctx, sessionCaps, teamCaps); err != nil {
		return err
	}
	s.warnClamped(sessionCaps)
	return nil
}

// warnClamped warns about each definition whose cap is above the
// session's: it is held to the session's.
func (s *Session) warnClamped(session budget.Caps) {
	if session.None() || s.cat == nil {
		return
	}
	for _, d := range s.cat.List() {
		caps := crew.DefinitionCaps(d)
		if _, lowered := caps.Clamp(session); lowered {
			fmt.Fprintf(s.Process.Stderr, "cohort: warning: agent type %q: its maxBudgetUsd of %s is above %s of %s; it is held to %s\n",
				d.Name, budget.USD(caps.USD), session.Label, budget.USD(session.USD), budget.USD(math.Min(caps.USD, session.USD)))
		}
	}
}
