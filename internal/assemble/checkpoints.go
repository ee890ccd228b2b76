package assemble

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/checkpoint"
	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/internal/safegit"
	"github.com/cohort-dev/cohort/settings"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/transcript"
	"github.com/cohort-dev/cohort/worktree"
)

// checkpoints is the session's side of package checkpoint: a checkpoint of
// the files before each user turn of the lead, taken while the turn's
// first request streams, and one when the turn ends. Snapshots run one
// after another, in the order asked. Every tool that writes waits until
// the files of the checkpoints asked for are captured in the store, not
// until each checkpoint is recorded and durable: a fan-out's first Bash
// calls no longer wait for the checkpoint's commit, record and ref and
// their four fsyncs (issue 40). A rewind waits for the whole checkpoint.
type checkpoints struct {
	store  *checkpoint.Store
	ctx    context.Context // ends with the session
	cancel context.CancelFunc
	wg     sync.WaitGroup

	keep checkpoint.Retention

	mu       sync.Mutex
	last     chan struct{}       // closed when the last snapshot asked for is done
	captured chan struct{}       // closed when its files are in the store (or it failed)
	turn     int                 // the lead's user turns so far
	marks    map[int]engine.Mark // where the lead's conversation was before each turn of this process
	warned   map[string]bool     // problems of a root's repository already reported (once a session)
	// boundaries counts the rewrites of the lead's transcript before this
	// process (a resumed session's): with the engine's own, a Place.
	boundaries int
}

// snapshotTimeout bounds one checkpoint.
const snapshotTimeout = 2 * time.Minute

// openCheckpoints opens the session's checkpoint store under Cohort's
// home; a store that cannot be opened is a warning (the session runs
// without checkpoints).
func (s *Session) openCheckpoints(ctx context.Context) {
	keep, on := s.checkpointSettings()
	if s.mate != nil || s.Process.Paths.CohortHome == "" || !on {
		return
	}
	store, err := checkpoint.Open(ctx, checkpoint.Config{Dir: checkpointDir(s.Plan), Git: s.git()})
	if err != nil {
		fmt.Fprintf(s.Process.Stderr, "cohort: warning: no checkpoints this session: %v\n", err)
		return
	}
	c := &checkpoints{store: store, keep: keep, marks: map[int]engine.Mark{}}
	c.ctx, c.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if s.resumed != nil {
		c.boundaries = s.resumed.Compactions
	}
	if recs, err := store.Records(s.id); err == nil {
		for _, r := range recs {
			c.turn = max(c.turn, r.Turn) // a resumed session numbers on
		}
	}
	s.cps = c
}

// closeGrace bounds how long a session's end waits for the checkpoints
// still running; then they are stopped (their git killed with its
// process group), so that a git waiting on a FIFO the checkpoint's scan
// could not see does not hold the session open until snapshotTimeout.
const closeGrace = 30 * time.Second

// finishCheckpoints waits until the checkpoints asked for are taken (each
// bounded by snapshotTimeout, and all by closeGrace) and lets no more
// start. Close calls it before anything else closes.
func (s *Session) finishCheckpoints() {
	c := s.cps
	if c == nil {
		return
	}
	done := make(chan struct{})
	go func() { c.wg.Wait(); close(done) }()
	t := time.NewTimer(closeGrace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		fmt.Fprintf(s.Process.Stderr, "cohort: warning: a checkpoint was still running %s after the session ended and was stopped; rewind cannot go back to the end of the last turn\n", closeGrace)
		c.cancel()
		<-done
	}
	c.cancel()
}

// waitCheckpoints waits until the checkpoints asked for are taken; more
// may be asked for after.
func (s *Session) waitCheckpoints() {
	if c := s.cps; c != nil {
		c.wg.Wait()
	}
}

// checkpointDir is the store's directory under Cohort's home.
func checkpointDir(p *Plan) string {
	return filepath.Join(p.Process.Paths.CohortHome, "checkpoints")
}

// snapshot starts a checkpoint after the ones already asked for.
func (s *Session) snapshot(phase checkpoint.Phase, prompt string) {
	c := s.cps
	if c == nil {
		return
	}
	c.mu.Lock()
	rec := checkpoint.Record{Phase: phase}
	if phase == checkpoint.Before {
		c.turn++
		if eng := s.lead.Engine(); eng != nil {
			m := eng.Mark()
			c.marks[c.turn] = m
			rec.Conversation = &checkpoint.Place{Boundaries: c.boundaries + m.Rewrites(), Messages: m.Messages()}
		}
	}
	rec.Turn = c.turn
	if s.checker != nil {
		if u, ok := s.checker.Unseen(); ok {
			rec.Unseen = &u // what the sandboxed git will not see
		}
	}
	prev, done, captured := c.last, make(chan struct{}), make(chan struct{})
	c.last, c.captured = done, captured
	c.mu.Unlock()
	var once sync.Once
	release := func() { once.Do(func() { close(captured) }) }
	if len(prompt) > 80 {
		prompt = prompt[:80]
	}
	rec.Prompt = prompt
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer release()
		if prev != nil {
			select {
			case <-prev:
			case <-c.ctx.Done():
				close(done)
				return
			}
		}
		ctx, cancel := context.WithTimeout(c.ctx, snapshotTimeout)
		defer cancel()
		cp, err := c.store.SnapshotThen(ctx, s.id, s.Process.ProjectRoot, rec, s.checkpointRoots(ctx), release)
		var blocked *checkpoint.Blocked
		switch {
		case err == nil || c.ctx.Err() != nil:
		case errors.As(err, &blocked):
			// A FIFO git would wait on, or a stall: the same every turn
			// until the user acts, so said once.
			if c.once("\x00blocked\x00" + blocked.Error()) {
				fmt.Fprintf(s.Process.Stderr, "cohort: warning: checkpoint %s turn %d: %v (reported once)\n", phase, rec.Turn, err)
			}
		default:
			fmt.Fprintf(s.Process.Stderr, "cohort: warning: checkpoint %s turn %d: %v\n", phase, rec.Turn, err)
		}
		if cp != nil {
			for _, r := range cp.Roots {
				for _, p := range r.Problems {
					if !c.once(r.Dir + "\x00" + p) {
						continue
					}
					fmt.Fprintf(s.Process.Stderr, "cohort: warning: checkpoints of %s: %s (reported once)\n", r.Dir, p)
				}
			}
		}
		release()
		close(done) // the prune is no one's to wait for
		if phase == checkpoint.Before {
			// The retention setting (refs only), applied while the turn
			// runs rather than after it: a print run's end waits for its
			// After checkpoint, not for a prune.
			_, _ = c.store.Prune(ctx, s.id, c.keep, false)
		}
	}()
}

// once reports whether key is new to the session's warnings, and marks
// it seen.
func (c *checkpoints) once(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.warned[key] {
		return false
	}
	if c.warned == nil {
		c.warned = map[string]bool{}
	}
	c.warned[key] = true
	return true
}

// waitCheckpoint returns once the checkpoints asked for so far are taken.
func (s *Session) waitCheckpoint(ctx context.Context) error {
	return s.waitSnapshot(ctx, false)
}

// waitCaptured returns once the files of the checkpoints asked for so far
// are in the store: what a tool that writes waits for. Snapshots run in
// order, so the last one's capture follows every earlier one's.
func (s *Session) waitCaptured(ctx context.Context) error {
	return s.waitSnapshot(ctx, true)
}

func (s *Session) waitSnapshot(ctx context.Context, captured bool) error {
	c := s.cps
	if c == nil {
		return nil
	}
	c.mu.Lock()
	last := c.last
	if captured {
		last = c.captured
	}
	c.mu.Unlock()
	if last == nil {
		return nil
	}
	select {
	case <-last:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// checkpointRoots are the directories a checkpoint covers: the project's
// repository and Cohort's worktrees of it, or the project's folder when it
// is not a repository (or git cannot be used).
func (s *Session) checkpointRoots(ctx context.Context) []checkpoint.Root {
	roots := []checkpoint.Root{{Dir: s.Process.ProjectRoot}}
	if s.wt != nil && s.Process.InGit {
		if m, err := s.wt.Manager(ctx); err == nil {
			roots = worktreeRoots(m, false)
		}
	}
	// $COHORT_HOME/tmp holds the sessions' private TMPDIRs, which Cohort's
	// own git may not read (package sandbox, "Cohort's own programs"):
	// where a project holds COHORT_HOME, a snapshot leaves it out, or
	// every checkpoint fails on a file there.
	pools := []string{filepath.Join(s.Process.Paths.CohortHome, "tmp")}
	if real, err := filepath.EvalSymlinks(pools[0]); err == nil && real != pools[0] {
		pools = append(pools, real)
	}
	inPool := func(path string) bool {
		for _, pool := range pools {
			if path == pool || strings.HasPrefix(path, pool+string(filepath.Separator)) {
				return true
			}
		}
		return false
	}
	unseen := inPool
	if s.checker != nil {
		unseen = func(path string) bool { return inPool(path) || s.deniedRead(path) } // hidden from git by the sandbox
	}
	for i := range roots {
		roots[i].Unseen = unseen
	}
	return roots
}

// worktreeRoots are the repository's main checkout and Cohort's
// worktrees; withBase gives each worktree the commit it was made from.
func worktreeRoots(m *worktree.Manager, withBase bool) []checkpoint.Root {
	main, err := m.Repo(m.Root())
	if err != nil {
		return nil
	}
	roots := []checkpoint.Root{{Dir: m.Root(), Repo: main}}
	for _, w := range m.Listed() {
		l, err := m.Repo(w.Path)
		if err != nil {
			continue
		}
		r := checkpoint.Root{Dir: w.Path, Repo: l}
		if withBase {
			r.Base = w.Base
		}
		roots = append(roots, r)
	}
	return roots
}

// writers are the tools that change files: each call waits for the turn's
// checkpoint.
var writers = map[string]bool{"Bash": true, "Write": true, "Edit": true, "MultiEdit": true, "NotebookEdit": true}

// afterCheckpoint makes the tools that write wait for the checkpoint.
func (s *Session) afterCheckpoint(ts []tool.Tool) []tool.Tool {
	if s.cps == nil {
		return ts
	}
	for i, t := range ts {
		if writers[t.Def().Name] {
			ts[i] = checkpointed{Tool: t, s: s}
		}
	}
	return ts
}

// checkpointed is a tool that runs once the turn's checkpoint has
// captured the files.
type checkpointed struct {
	tool.Tool
	s *Session
}

func (c checkpointed) Run(ctx context.Context, env *tool.Env, raw json.RawMessage) (tool.Result, error) {
	if err := c.s.waitCaptured(ctx); err != nil {
		return tool.Result{}, err
	}
	return c.Tool.Run(ctx, env, raw)
}

// checkpointSettings reads the settings' "checkpoints" object:
// {"enabled": false} turns checkpoints off; keepTurns and keepDays are
// the retention (checkpoint.DefaultRetention when unset).
func (p *Plan) checkpointSettings() (checkpoint.Retention, bool) {
	type section struct {
		Enabled *bool `json:"enabled"`
		checkpoint.Retention
	}
	keep := checkpoint.DefaultRetention
	if p.Settings.Loaded == nil {
		return keep, true
	}
	got, ok, probs := settings.Winner[section](p.Settings.Loaded, "checkpoints")
	for _, pr := range probs {
		fmt.Fprintf(p.Process.Stderr, "cohort: warning: %v\n", pr)
	}
	if !ok {
		return keep, true
	}
	if got.Value.KeepTurns > 0 {
		keep.KeepTurns = got.Value.KeepTurns
	}
	if got.Value.KeepDays > 0 {
		keep.KeepDays = got.Value.KeepDays
	}
	return keep, got.Value.Enabled == nil || *got.Value.Enabled
}

// PruneCheckpoints removes the checkpoints of every session that the
// retention setting does not keep, and the objects only they needed:
// cohort checkpoints prune.
func PruneCheckpoints(ctx context.Context, p *Plan) (string, error) {
	store, err := checkpoint.Open(ctx, checkpoint.Config{Dir: checkpointDir(p), Git: &safegit.Runner{Env: p.childEnviron()}})
	if err != nil {
		return "", err
	}
	keep, _ := p.checkpointSettings()
	got, err := store.Prune(ctx, "", keep, true)
	return got.String(), err
}

// rewindConversation takes the lead's conversation back to before turn;
// the next turn still takes the next number, so that no two turns of a
// session share one (a list of turns names each once). A turn of this process
// goes back to the mark taken when it began; one of an earlier process
// (the session was resumed) to the place its checkpoint recorded.
func (s *Session) rewindConversation(ctx context.Context, turn int) error {
	c := s.cps
	eng := s.lead.Engine()
	if eng == nil {
		return fmt.Errorf("the lead has no conversation to rewind")
	}
	c.mu.Lock()
	mark, ok := c.marks[turn]
	c.mu.Unlock()
	if !ok || eng.RewindTo(mark) != nil {
		place, err := conversationPlace(ctx, c.store, s.id, turn)
		if err != nil {
			return err
		}
		msgs, _, err := transcript.At(transcript.Path(s.Process.ProjectDir, s.id), place.Boundaries, place.Messages)
		if err != nil {
			return err
		}
		if err := eng.Restore(msgs, fmt.Sprintf("the conversation was rewound to before turn %d", turn)); err != nil {
			return err
		}
	}
	return nil // the next turn takes the next number: turns are never renumbered
}
