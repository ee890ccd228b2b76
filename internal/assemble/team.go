package assemble

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/flags"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/sessionorigin"
	"github.com/cohort-dev/cohort/sessionsock"
	"github.com/cohort-dev/cohort/tasklist"
	"github.com/cohort-dev/cohort/team"
	"github.com/cohort-dev/cohort/teammate"
	"github.com/cohort-dev/cohort/tmux"
	"github.com/cohort-dev/cohort/tool"
)

// openTeams prepares the team machinery: the lead's side of a team (the
// teammate package), made before the runtime, whose tools it adds to.
func (s *Session) openTeams() error {
	store, err := team.NewStore(team.HomeConfig(s.Process.Paths.CohortHome))
	if err != nil {
		return err
	}
	s.teams = store
	s.closers = append(s.closers, store.Close) // after the lead's inboxes (closers run last first)
	s.teamsOn = s.Settings.Set.Bool(flags.AgentTeams)
	live, err := s.teamLiveness()
	if err != nil {
		return err
	}
	cfg := teammate.LeadConfig{
		Heartbeat: live.Heartbeat, DeadAfter: live.DeadAfter,
		Store: store, Tasks: s.tasks, Checker: s.checker, Prompter: s.prompter(),
		SessionID: s.id, LeadModel: s.model.name, SessionsDir: filepath.Join(s.Process.Paths.CohortHome, "sessions"),
		Peers:             s.peerSessions,
		ExpectIdleNotice:  s.expectNotice,
		Bridge:            s.bridgeSend(),
		PermissionTimeout: s.Team.PermissionTimeout,
		ImplicitTeam:      s.Settings.Set.Bool(flags.ImplicitTeam),
		Logf:              s.logf,
		OnEvent:           s.teamEvent,
	}
	if s.teamsOn {
		cfg.Backend, cfg.Backends, cfg.Process = s.teammateBackend(), s.Team.Backends, s.processBackend()
		cfg.NATS = s.teamNATS(cfg)
	}
	if approve := s.Team.ApprovePlan; approve != nil {
		cfg.PlanApprover = func(ctx context.Context, from, plan string) (bool, string, error) {
			color := ""
			for _, m := range s.team.Members() {
				if m.Name == from {
					color = m.Color
				}
			}
			return approve(ctx, from, color, plan)
		}
	}
	s.team, err = teammate.NewLead(cfg)
	if err != nil {
		return err
	}
	s.closers = append(s.closers, s.team.Close)
	return nil
}

// resumeTeam takes back, on a resumed session, the team it led before it
// ended (orphaned since): the lead goes on messaging and spawning into it
// without creating it again. A team another running session took over in
// the meantime stays that session's.
func (s *Session) resumeTeam(ctx context.Context) error {
	if s.resumed == nil || !s.teamsOn || s.team == nil {
		return nil
	}
	name, err := s.team.Resume(ctx, s.lead)
	if err != nil {
		return fmt.Errorf("resume the team session %s led: %w", s.id, err)
	}
	if name != "" {
		s.logf("resumed as the lead of team %s", name)
	}
	return nil
}

// notifyKilled tells a resumed lead about the background tasks that died
// with an earlier process of its session: each gets a killed notification
// at the lead's next turn, once (package task, NotifyKilled); one the
// transcript already holds is not given again.
func (s *Session) notifyKilled() {
	if s.resumed == nil || s.tasks == nil {
		return
	}
	var seen map[string]bool
	skip := func(id string) bool {
		if seen == nil {
			seen = notifiedTasks(s.resumed.Messages)
		}
		return seen[id]
	}
	ids, err := s.tasks.NotifyKilled(s.lead.Queue(), skip, crew.KilledResult)
	if err != nil {
		fmt.Fprintf(s.Process.Stderr, "cohort: warning: %v\n", err)
	}
	if len(ids) > 0 {
		fmt.Fprintf(s.Process.Stderr, "cohort: %d background task(s) of the earlier run died with it (%s); the lead is told\n", len(ids), strings.Join(ids, ", "))
	}
}

// notifiedTasks are the task ids of the task notifications in msgs.
func notifiedTasks(msgs []llm.Message) map[string]bool {
	out := map[string]bool{}
	for _, m := range msgs {
		if m.Role != llm.RoleUser {
			continue
		}
		for _, b := range m.Content {
			text := b.Text
			for {
				i := strings.Index(text, "<task-notification>")
				if i < 0 {
					break
				}
				text = text[i:]
				if _, rest, ok := strings.Cut(text, "<task-id>"); ok {
					if id, _, ok := strings.Cut(rest, "</task-id>"); ok {
						out[strings.TrimSpace(id)] = true
					}
				}
				text = text[len("<task-notification>"):]
			}
		}
	}
	return out
}

// teamTools are the tools of teams (messaging, team files, the shared task
// list; only with the agent_teams flag) and plan mode (always).
func (s *Session) teamTools(rt *crew.Crew) []tool.Tool {
	if !s.teamsOn || s.team == nil {
		return planTools(rt)
	}
	ts := s.team.Tools(rt)
	ts = append(ts, s.team.Scope(s.withCompletionHooks(rt, tasklist.Tools(s.teams.TaskLists())))...)
	return append(ts, planTools(rt)...)
}

// teamNATS is the NATS server of the teams this session creates: the
// session's remote server when any teammate runs remote (a remote teammate
// reaches its team only there); empty keeps teams in files.
func (s *Session) teamNATS(cfg teammate.LeadConfig) string {
	remote := cfg.Backend == teammate.BackendRemote
	for _, b := range cfg.Backends {
		remote = remote || b == teammate.BackendRemote
	}
	if !remote {
		return ""
	}
	return s.Remote.NATS.URL
}

// teammateBackend resolves where teammates run: the plan's mode, the
// teammateMode setting, else auto; auto means tmux inside tmux and
// in-process otherwise.
func (s *Session) teammateBackend() string {
	mode := s.Team.Mode
	if mode == "" {
		mode = s.settingString("teammateMode")
	}
	if mode == "" || mode == teammate.BackendAuto {
		if tmux.Inside(s.Process.Getenv) {
			return teammate.BackendTmux
		}
		return teammate.BackendInProcess
	}
	return mode
}

// teamChanged returns a channel closed when the team's state may have
// changed (nil, never ready, without a team).
func (s *Session) teamChanged() <-chan struct{} {
	if !s.teamsOn || s.team == nil {
		return nil
	}
	return s.team.Changed()
}

// teamBusy reports whether teammates still work or have unread mail.
func (s *Session) teamBusy() bool { return s.teamsOn && s.team.Busy() }

// EndTeam asks every teammate to shut down (print mode's end).
func (s *Session) EndTeam() {
	if s.team == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s.team.Shutdown(ctx, "the session is ending")
}

// listen serves uds:<path> messages for this session: they reach the lead
// like a teammate's message. A failure (a path too long for a socket) is a
// warning; the session runs without it.
//
// The session's origin record (package sessionorigin) is written with
// the socket, before any turn can send a message, and removed at Close.
func (s *Session) listen(ctx context.Context) {
	s.openHolding()
	dir := s.sessionsDir()
	startedBy := sessionorigin.Detect(dir)
	s.openBridge(startedBy == "")
	l, err := sessionsock.Listen(ctx, sessionsock.Config{
		Dir: dir, SessionID: s.id,
		Handler: s.receive,
	})
	if err != nil {
		if s.Process.Verbose {
			fmt.Fprintf(s.Process.Stderr, "cohort: warning: no session socket: %v\n", err)
		}
		return
	}
	s.socket = l.Path()
	if err := sessionorigin.Write(dir, s.id, startedBy); err != nil {
		s.logf("origin record: %v", err)
	}
	s.closers = append(s.closers, func() {
		_ = l.Close()
		_ = sessionorigin.Remove(dir, s.id)
		s.endDrive("has exited")
	})
}
