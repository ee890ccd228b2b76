package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/session"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/team"
	"github.com/cohort-dev/cohort/teammate"
	"github.com/cohort-dev/cohort/tool/isolation"
	"github.com/cohort-dev/cohort/worktree"
)

// stopWaitCLI bounds how long the CLI waits for something it is stopping.
const stopWaitCLI = 15 * time.Second

// runTeammate runs one member of a team as this process: it takes the
// member's inbox, works on its prompt, and then takes a turn per message
// until the lead asks it to shut down.
func runTeammate(ctx context.Context, inv *Invocation, o *options, teamName, name, sessionID string) error {
	b, err := loadBase(ctx, inv, o)
	if err != nil {
		return err
	}
	s := &sess{base: b, out: newPrinter(inv.Stdout, inv.Stderr, "text", o.verbose)}
	defer s.close()
	s.startGitSnapshot(ctx)
	store, err := team.NewStore(team.StoreConfig{Root: filepath.Join(s.env.CohortHome, "teams")})
	if err != nil {
		return err
	}
	m, err := store.Member(teamName, name)
	if err != nil {
		return &exitError{code: 2, err: fmt.Errorf("teammate %s of team %s: %w", name, teamName, err)}
	}
	if !m.IsActive {
		return &exitError{code: 2, err: fmt.Errorf("teammate %s of team %s is not active in the team file", name, teamName)}
	}
	s.id = sessionID
	if s.id == "" {
		s.id = session.NewID()
	}
	s.out.sessionID = s.id
	spec := o.model
	if spec == "" {
		spec = m.Model
	}
	if s.model, err = b.openModel(spec); err != nil {
		return &exitError{code: 2, err: err}
	}
	s.closers = append(s.closers, s.model.close)
	if s.tasks, err = task.NewRegistry(task.Config{Home: s.env.CohortHome, SessionID: s.id}); err != nil {
		return err
	}
	s.closers = append(s.closers, s.stopTasks)
	if err := s.permissions(); err != nil {
		return err
	}
	if err := s.teamAllowedPaths(ctx, store, teamName); err != nil {
		return err
	}
	s.teams, s.teamsOn = store, true
	s.openHooks()
	if s.team, err = teammate.NewLead(teammate.LeadConfig{Store: store, Tasks: s.tasks, Checker: s.checker,
		SessionID: s.id, Logf: s.logf}); err != nil {
		return err
	}
	s.closers = append(s.closers, s.team.Close)
	if err := s.runtime(ctx); err != nil {
		return err
	}
	def, ok := s.rt.Catalog().Get(m.AgentType)
	if !ok {
		return &exitError{code: 2, err: fmt.Errorf("teammate %s: unknown agent type %q", name, m.AgentType)}
	}
	tcfg := teammate.Config{Team: teamName, Member: m, Store: store, Runtime: s.rt,
		Def: def, LeadModel: s.model.name, Checker: s.checker, PermissionTimeout: o.permissionTimeout,
		Logf: s.logf}
	if m.WorktreePath != "" {
		// The lead made and locked the worktree; this process confines the
		// teammate to it.
		root, err := worktree.RepoRoot(ctx, m.WorktreePath)
		if err != nil {
			return &exitError{code: 2, err: fmt.Errorf("teammate %s: worktree %s: %w", name, m.WorktreePath, err)}
		}
		tcfg.Guard = isolation.NewGuard(worktree.NewGuard(m.WorktreePath, root), m.WorktreePath, root, s.env.Home)
	}
	tm, err := teammate.Start(ctx, tcfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(inv.Stdout, "cohort teammate %s (%s) registered in team %s; working.\n", m.Name, m.AgentID, teamName)
	err = tm.Run(ctx)
	if errors.Is(err, context.Canceled) {
		fmt.Fprintf(inv.Stdout, "cohort teammate %s stopped.\n", m.Name)
		return nil
	}
	if err == nil {
		fmt.Fprintf(inv.Stdout, "cohort teammate %s shut down.\n", m.Name)
	}
	return err
}

// teamAllowedPaths gives this process's checker the paths the team allows
// every member.
func (s *sess) teamAllowedPaths(ctx context.Context, store *team.Store, teamName string) error {
	t, err := store.Load(teamName)
	if err != nil {
		return err
	}
	var rules []string
	for _, p := range t.Config.TeamAllowedPaths {
		tool := p.ToolName
		if tool == "" {
			tool = "Edit"
		}
		rules = append(rules, fmt.Sprintf("%s(//%s/**)", tool, filepath.Clean(p.Path)[1:]))
	}
	if len(rules) == 0 {
		return nil
	}
	return s.checker.AddRules(ctx, permission.Allow, rules, permission.DestSession)
}

func (s *sess) logf(format string, args ...any) {
	if s.o.verbose {
		fmt.Fprintf(s.inv.Stderr, "cohort: "+format+"\n", args...)
	}
}
