package assemble

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/cohort-dev/cohort/checkpoint"
	"github.com/cohort-dev/cohort/internal/safegit"
	"github.com/cohort-dev/cohort/sessionsock"
	"github.com/cohort-dev/cohort/transcript"
	"github.com/cohort-dev/cohort/worktree"
)

// ErrSessionLive: cohort rewind was asked to rewind a session that a live
// process runs; its edits and transcript would interleave with the
// rewind's.
var ErrSessionLive = errors.New("the session is live")

// ErrRewindBusy: a rewind was asked for while the lead is in a turn.
var ErrRewindBusy = errors.New("the lead is in a turn: interrupt it before rewinding")

// Rewind rewinds this session's files to before one of its lead's user
// turns (r.Session is ignored). Background agents and teammates still
// running are stopped first, since their edits would interleave with the
// rewind's; a dry run stops nothing and changes nothing.
func (s *Session) Rewind(ctx context.Context, r checkpoint.Rewind) (*checkpoint.Report, error) {
	if s.cps == nil {
		return nil, fmt.Errorf("session %s: %w (checkpoints are off in this session)", s.id, checkpoint.ErrNoCheckpoints)
	}
	s.inbound.mu.Lock()
	driving := s.inbound.driving
	s.inbound.mu.Unlock()
	if driving && !r.DryRun {
		return nil, ErrRewindBusy
	}
	if !r.DryRun && r.Turn > 0 && r.Files() {
		if err := s.stopBackground(ctx); err != nil {
			return nil, err
		}
	}
	if err := s.waitCheckpoint(ctx); err != nil {
		return nil, err
	}
	roots := s.checkpointRoots(ctx)
	if m, err := s.wt.Manager(ctx); err == nil && s.Process.InGit {
		roots = worktreeRoots(m, true)
	}
	rep := &checkpoint.Report{Session: s.id, Turn: r.Turn}
	if r.Files() || r.Turn == 0 {
		var err error
		if rep, err = rewindFiles(ctx, s.cps.store, s.id, s.Process.ProjectRoot, roots, r, s.deniedRead); err != nil {
			return rep, err
		}
	}
	if r.Conversation() && r.Turn > 0 && !r.DryRun {
		if err := s.rewindConversation(ctx, r.Turn); err != nil {
			return rep, err
		}
		rep.Conversation = true
	}
	return rep, nil
}

// stopBackground stops the background agents, shells and teammates still
// running, and waits for them.
func (s *Session) stopBackground(ctx context.Context) error {
	for _, t := range s.tasks.Running() {
		if _, err := s.tasks.Stop(ctx, t.ID); err != nil {
			return fmt.Errorf("stopping %s before the rewind: %w", t.ID, err)
		}
	}
	if s.team != nil && s.team.Busy() {
		s.team.Shutdown(ctx, "the user is rewinding the session's files")
	}
	return nil
}

// Rewind rewinds the files of the session r names (the project's latest
// with checkpoints when none) without a session running: cohort rewind.
// Git runs with the repository's programs off (safegit), unconfined: no
// sandbox is opened for it.
func Rewind(ctx context.Context, p *Plan, r checkpoint.Rewind) (*checkpoint.Report, error) {
	git := &safegit.Runner{Env: p.childEnviron()}
	store, err := checkpoint.Open(ctx, checkpoint.Config{Dir: checkpointDir(p), Git: git})
	if err != nil {
		return nil, err
	}
	id := r.Session
	if id == "" {
		ids, err := store.Sessions(p.Process.ProjectRoot)
		if err != nil {
			return nil, err
		}
		if len(ids) == 0 {
			return nil, fmt.Errorf("no session of %s: %w", p.Process.ProjectRoot, checkpoint.ErrNoCheckpoints)
		}
		id = ids[0]
	}
	if !r.DryRun {
		release, err := sessionsock.Hold(filepath.Join(p.Process.Paths.CohortHome, "sessions"), id)
		switch {
		case errors.Is(err, sessionsock.ErrInUse):
			return nil, fmt.Errorf("session %s is running in another process: rewind it there (/rewind in its screen, or Session.Rewind), or end it and run this again: %w", id, ErrSessionLive)
		case err == nil:
			defer release() // a session that starts meanwhile waits for none of it, but gets no socket
		}
	}
	roots := []checkpoint.Root{{Dir: p.Process.ProjectRoot}}
	if p.Process.InGit {
		if m, err := worktree.New(ctx, worktree.Config{Dir: p.Process.Cwd, Env: p.childEnviron()}); err == nil {
			roots = worktreeRoots(m, true)
		}
	}
	// The Read deny rules of the settings (and of this command line): the
	// session's checkpoints never saw what they cover.
	checker, err := p.newChecker()
	if err != nil {
		return nil, err
	}
	rep := &checkpoint.Report{Session: id, Turn: r.Turn}
	if r.Files() || r.Turn == 0 {
		if rep, err = rewindFiles(ctx, store, id, p.Process.ProjectRoot, roots, r, func(path string) bool { return checker.DeniedRead("", path) }); err != nil {
			return rep, err
		}
	}
	if r.Conversation() && r.Turn > 0 {
		place, err := conversationPlace(ctx, store, id, r.Turn)
		if err != nil {
			return rep, err
		}
		if !r.DryRun {
			if err := transcript.Rewind(transcript.Path(p.Process.ProjectDir, id), place.Boundaries, place.Messages); err != nil {
				return rep, err
			}
		}
		rep.Conversation = true
	}
	return rep, nil
}

// conversationPlace is where the lead's conversation was before turn, as
// its verified Before checkpoint recorded it.
func conversationPlace(ctx context.Context, store *checkpoint.Store, session string, turn int) (*checkpoint.Place, error) {
	rec, err := store.Target(session, turn)
	if err != nil {
		return nil, err
	}
	cp, err := store.Load(ctx, session, rec)
	if err != nil {
		return nil, err
	}
	if cp.Conversation == nil {
		return nil, fmt.Errorf("session %s: the checkpoint before turn %d does not record where the conversation was (the lead had not started): only its files can be rewound", session, turn)
	}
	return cp.Conversation, nil
}

// rewindFiles lists the session's turns (turn 0), plans a rewind, or
// carries it out.
func rewindFiles(ctx context.Context, store *checkpoint.Store, session, project string, roots []checkpoint.Root, r checkpoint.Rewind, unseen func(string) bool) (*checkpoint.Report, error) {
	if r.Turn == 0 {
		recs, err := store.Records(session)
		if err != nil {
			return nil, err
		}
		rep := &checkpoint.Report{Session: session}
		for _, rec := range recs {
			if rec.Phase == checkpoint.Before {
				rep.Turns = append(rep.Turns, rec)
			}
		}
		return rep, nil
	}
	plan, err := store.Plan(ctx, checkpoint.Request{Session: session, Project: project, Turn: r.Turn, Roots: roots, Unseen: unseen})
	if err != nil {
		return nil, err
	}
	rep := plan.Report()
	if r.DryRun {
		return rep, nil
	}
	rep.Done, err = store.Apply(ctx, plan, r.Options())
	return rep, err
}
