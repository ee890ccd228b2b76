package assemble

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/remote"
	"github.com/cohort-dev/cohort/team"
	"github.com/cohort-dev/cohort/teammate"
	"github.com/cohort-dev/cohort/worktree"
)

// stopWaitCLI bounds how long the session waits for something it stops.
const stopWaitCLI = 15 * time.Second

// openTeammate makes this session one member of a team (what `cohort
// teammate` runs): it checks the member in the team file, opens
// its model and permissions, then takes the member's inbox and builds its
// agent. Run works on the member's prompt and then a turn per message
// until the lead asks it to shut down.
func (s *Session) openTeammate(ctx context.Context) error {
	role := s.Plan.Session.Teammate
	store, err := team.NewStore(team.HomeConfig(s.Process.Paths.CohortHome))
	if err != nil {
		return err
	}
	s.closers = append(s.closers, store.Close) // after the member's inbox (closers run last first)
	m, err := store.Member(role.Team, role.Name)
	if err != nil {
		return fieldErr("Role", "teammate %s of team %s: %v", role.Name, role.Team, err)
	}
	if !m.IsActive {
		return fieldErr("Role", "teammate %s of team %s is not active in the team file", role.Name, role.Team)
	}
	spawn, onWorker, err := store.Spawned(role.Team, role.Name)
	if err != nil {
		return fieldErr("Role", "teammate %s of team %s: %v", role.Name, role.Team, err)
	}
	if onWorker {
		// The signed spawn's mode and plan approval, under the worker's
		// ceiling; the checker keeps every later mode under it too.
		if permission.Mode(m.Mode).Exceeds(permission.Mode(spawn.Ceiling)) {
			m.Mode = spawn.Ceiling
		}
		m.PlanModeRequired = m.PlanModeRequired || spawn.PlanModeRequired
	}
	if onWorker || m.BackendType == team.BackendRemote {
		// On a worker: the lead's directory is on the lead's machine; the
		// teammate works in the job's clone.
		m.Cwd, m.WorktreePath = s.Process.Cwd, ""
	}
	spec := s.Model.Spec
	if spec == "" {
		spec = m.Model
	}
	if err := s.openModel(spec); err != nil {
		return err
	}
	s.cat = s.LoadCatalog(ctx, s.KnownTools()) // before the permissions: see openLead
	if err := s.permissions(); err != nil {
		return err
	}
	if onWorker {
		if err := s.checker.SetCeiling(permission.Mode(spawn.Ceiling)); err != nil {
			return fieldErr("Role", "teammate %s: the spawn's mode: %v", role.Name, err)
		}
	}
	def, ok := s.cat.Get(m.AgentType)
	if !ok {
		return fieldErr("Role", "teammate %s: unknown agent type %q", role.Name, m.AgentType)
	}
	var guardRoot string
	if m.WorktreePath != "" {
		if guardRoot, err = worktree.RepoRoot(ctx, m.WorktreePath); err != nil {
			return fieldErr("Role", "teammate %s: worktree %s: %v", role.Name, m.WorktreePath, err)
		}
	}
	// From here on the session writes under Home.
	if err := s.openTrace(); err != nil {
		return err
	}
	if err := s.openTasks(); err != nil {
		return err
	}
	if err := s.openBudget(ctx, false); err != nil {
		return err
	}
	s.closers = append(s.closers, func() { _ = s.StopTasks() })
	if err := s.teamAllowedPaths(ctx, store, role.Team); err != nil {
		return err
	}
	if err := s.openSandbox(ctx); err != nil {
		return err
	}
	s.startGitSnapshot(ctx) // after the sandbox, which confines its git
	s.teams, s.teamsOn = store, true
	s.openHooks()
	live, err := s.teamLiveness()
	if err != nil {
		return err
	}
	if s.team, err = teammate.NewLead(teammate.LeadConfig{Store: store, Tasks: s.tasks, Checker: s.checker,
		SessionID: s.id, Logf: s.logf, OnEvent: s.teamEvent, Heartbeat: live.Heartbeat, DeadAfter: live.DeadAfter}); err != nil {
		return err
	}
	s.closers = append(s.closers, s.team.Close)
	s.openSkills()
	s.openMCP(ctx)
	s.openWorkflows()
	if err := s.openCrew(ctx); err != nil {
		return err
	}
	tcfg := teammate.Config{Team: role.Team, Member: m, Store: store, Runtime: s.rt,
		Def: def, LeadModel: s.model.name, Checker: s.checker, PermissionTimeout: s.Team.PermissionTimeout,
		Logf: s.logf, OnEvent: s.teamEvent, Heartbeat: live.Heartbeat, LeadDeadAfter: live.DeadAfter}
	if role.Siblings != "" {
		dir, err := store.Dir(role.Team)
		if err != nil {
			return err
		}
		gate, err := teammate.NewFileGate(dir, role.Siblings, m.Name, 0)
		if err != nil {
			return fieldErr("Role", "teammate %s: %v", role.Name, err)
		}
		tcfg.Siblings = gate
	}
	if m.WorktreePath != "" {
		// The lead made and locked the worktree; this process confines the
		// teammate to it.
		tcfg.Guard = worktree.NewGuard(m.WorktreePath, guardRoot, s.Process.Paths.Home)
	}
	if s.mate, err = teammate.Start(ctx, tcfg); err != nil {
		return err
	}
	s.closers = append(s.closers, s.mate.Close)
	return nil
}

// teamAllowedPaths gives this process's checker the paths the team allows
// every member.
func (s *Session) teamAllowedPaths(ctx context.Context, store *team.Store, teamName string) error {
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

func (s *Session) logf(format string, args ...any) {
	if s.Process.Verbose {
		fmt.Fprintf(s.Process.Stderr, "cohort: "+format+"\n", args...)
	}
}

// JoinTeam makes the team of a teammate spawn known in p's home (what a
// worker does before it runs the member, cohort.RemoteRunner): the team
// file comes from the team's NATS server (team.Store.Join) and the lead's
// message key from the signed spawn is pinned, so only the lead that
// signed the spawn can answer for the lead there, with the mark of its
// terms (none older is accepted); then the member's key is
// made here and claimed, and JoinTeam returns once the lead has signed it.
//
// The member's mode and plan approval are the signed spawn's, its mode as
// the worker's policy capped it (mode): they are pinned here (team.Store.
// PinSpawn) and openTeammate runs the member with no more, whatever the
// team file says.
func JoinTeam(ctx context.Context, p *Plan, tm *remote.Teammate, mode permission.Mode) error {
	home, err := Home(p)
	if err != nil {
		return err
	}
	store, err := team.NewStore(team.HomeConfig(home))
	if err != nil {
		return err
	}
	defer store.Close()
	if _, err := store.Join(ctx, tm.Team, tm.NATS); err != nil {
		return fmt.Errorf("the worker cannot join team %s: %w", tm.Team, err)
	}
	if err := store.PinKey(tm.Team, team.LeadName, tm.LeadKey); err != nil {
		return err
	}
	// Terms older than those the spawn was issued under, written in the
	// bucket before this join, are refused (team.Store.PinTerms).
	if err := store.PinTerms(tm.Team, team.TermsMark{Created: tm.TermsCreated, Seq: tm.TermsSeq}); err != nil {
		return err
	}
	if err := store.PinGrants(tm.Team, tm.Grants); err != nil {
		return err
	}
	if err := store.PinSpawn(tm.Team, tm.Member, team.Spawn{Ceiling: string(mode), PlanModeRequired: tm.PlanModeRequired}); err != nil {
		return err
	}
	// The member's key is made here and signed by the lead, which checks
	// the claim against the spawn's join secret.
	return store.ClaimKey(ctx, tm.Team, tm.Member, tm.JoinSecret)
}

// DropJobProject removes what a remote job's session kept under $COHORT_HOME
// for its project: its transcripts and memory live under a project dir
// named after the job's clone, which is gone after the job, so a worker
// that runs thousands of jobs keeps none of them.
func DropJobProject(s *Session) {
	if dir, home := s.Process.ProjectDir, s.Process.Paths.CohortHome; dir != "" && strings.HasPrefix(dir, filepath.Join(home, "projects")+string(filepath.Separator)) {
		_ = os.RemoveAll(dir)
	}
}
