package cohort

import (
	"context"
	"fmt"
	"io"
	"iter"
	"os"
	"time"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/dream"
	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/flags"
	"github.com/cohort-dev/cohort/memory"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/transcript"
)

// projectMemory is the session's project memory: its directory (links
// resolved) and the index as loaded at session start. Empty when the
// directory was refused.
type projectMemory struct {
	dir     string
	index   memory.Index
	loaded  bool
	context string // what the lead is told (memory.Context)
	sched   *dream.Scheduler
	auto    *dream.Auto // automatic dreams (Config.AutoDream), nil when off
}

// openMemory prepares the project's memory directory, loads its index and
// makes it writable for the file tools; a refused directory (a link out of
// COHORT_HOME) is a warning, and the session runs without memory.
func (s *Session) openMemory() {
	dir, err := memory.Prepare(s.env.CohortHome, memory.ProjectDir(s.projectDir))
	if err != nil {
		fmt.Fprintf(s.inv.Stderr, "cohort: warning: %v; this session runs without project memory\n", err)
		return
	}
	m := &s.mem
	m.dir = dir
	ix, ok, err := memory.LoadIndex(dir)
	if err != nil {
		fmt.Fprintf(s.inv.Stderr, "cohort: warning: %v\n", err)
	}
	m.index, m.loaded = ix, ok
	m.context = memory.Context(dir, ix, ok)
	s.checker.AddMemoryDir(dir)
	m.sched = dream.NewScheduler(dream.Config{MemoryDir: dir, ProjectDir: s.projectDir, SessionID: s.id,
		Gates: dream.Gates{Enabled: s.flags.Bool(flags.AutoDream), MinHours: s.flags.Int(flags.AutoDreamMinHours),
			MinSessions: s.flags.Int(flags.AutoDreamMinSessions)}})
}

// startAutoDream turns on automatic dreams: in a long-lived session
// (Config.AutoDream), never in print mode (StopAfterRun) or a teammate.
func (s *Session) startAutoDream() {
	if !s.cfg.AutoDream || s.cfg.StopAfterRun || s.mem.sched == nil || s.cfg.Role.IsTeammate() {
		return
	}
	s.mem.auto = dream.NewAuto(dream.AutoConfig{Scheduler: s.mem.sched, Start: s.startDream, Logf: s.dreamLog})
}

func (s *Session) dreamLog(format string, args ...any) {
	if s.o.verbose {
		fmt.Fprintf(s.inv.Stderr, "cohort: dream: "+format+"\n", args...)
	}
}

// startDream starts the consolidation of a won gate chain as a task.
func (s *Session) startDream(ctx context.Context, t *dream.Ticket) (*task.Task, error) {
	return dream.Start(ctx, dream.Spec{Runtime: s.rt, Ticket: t, MemoryDir: s.mem.dir, ProjectDir: s.projectDir,
		Checker: s.checker, Model: s.lead.Info().Model})
}

// afterTurn runs after each of the lead's turns: the dream's gate chain,
// in the background (it never delays the turn).
func (s *Session) afterTurn() {
	if s.mem.auto != nil {
		s.mem.auto.Poke()
	}
}

// agentMemory is crew.Config.AgentMemory: the lead is told about the
// project's memory, an agent whose definition sets memory about its own.
func (s *Session) agentMemory(info tool.Caller, def *agentdef.Definition) string {
	var out string
	if info.Kind == tool.KindLead && s.mem.dir != "" {
		out = s.mem.context
	}
	if def == nil || def.Memory == "" {
		return out
	}
	dir, base, err := memory.AgentDir(def.Memory, def.Name, s.env.CohortHome, s.projectRoot)
	if err == nil {
		dir, err = memory.Prepare(base, dir)
	}
	if err != nil {
		fmt.Fprintf(s.inv.Stderr, "cohort: warning: agent %s: %v; it runs without its memory\n", def.Name, err)
		return out
	}
	s.checker.AddMemoryDir(dir)
	ix, ok, err := memory.LoadIndex(dir)
	if err != nil {
		fmt.Fprintf(s.inv.Stderr, "cohort: warning: agent %s: %v\n", def.Name, err)
	}
	if out != "" {
		out += "\n"
	}
	return out + memory.Context(dir, ix, ok)
}

// MemoryDir returns the project memory directory of the session ("" when
// it was refused).
func (s *Session) MemoryDir() string { return s.mem.dir }

// Dream consolidates the project's memory now (cohort dream), skipping
// every gate but the lock, and yields the dream's events until it ends,
// then a result whose text names the memory files it touched. It waits
// for the dream; breaking out of the loop or cancelling ctx stops it (the
// lock is rolled back). Like Run, one at a time.
func (s *Session) Dream(ctx context.Context) iter.Seq2[Event, error] {
	return s.serve(ctx, false, func(ctx context.Context, _ string) Event {
		start := time.Now()
		r := Event{Type: EventResult, Subtype: engine.StopSuccess}
		res, err := s.dreamNow(ctx)
		switch {
		case err != nil:
			r.Subtype, r.IsError, r.Result = engine.StopExecution, true, err.Error()
		case res.Status != task.StatusCompleted:
			r.Subtype, r.IsError, r.Result = engine.StopExecution, true, "the consolidation "+string(res.Status)+": "+res.Err
		default:
			r.Result = res.Result.Text
			if d, ok := res.Detail.(dream.Detail); ok {
				r.NumTurns = d.Turns
			}
		}
		usage, cost, byModel := s.spending()
		r.Usage, r.TotalCostUSD, r.ModelUsage = &usage, cost, byModel
		r.DurationMs = time.Since(start).Milliseconds()
		r.SessionID, r.UUID, r.Time = s.id, transcript.NewID(), time.Now()
		return r
	})
}

// dreamNow runs one consolidation and waits for it.
func (s *Session) dreamNow(ctx context.Context) (task.State, error) {
	if s.mem.sched == nil {
		return task.State{}, fmt.Errorf("the project memory directory is not available (see the warning above)")
	}
	tk, err := s.mem.sched.Force(ctx)
	if err != nil {
		return task.State{}, err
	}
	t, err := s.startDream(ctx, tk)
	if err != nil {
		return task.State{}, err
	}
	select {
	case <-t.Done():
	case <-ctx.Done():
		stop, cancel := context.WithTimeout(context.Background(), controlWait)
		defer cancel()
		_, _ = s.tasks.Stop(stop, t.ID())
		<-t.Done()
	}
	return t.State(), nil
}

// ShowMemory writes where a session with cfg keeps the project's memory
// and its index as an agent would see it (cohort memory).
func ShowMemory(ctx context.Context, cfg Config, w io.Writer) error {
	b, err := loadBase(ctx, cfg.invocation(), cfg.options())
	if err != nil {
		return err
	}
	dir := memory.ProjectDir(b.projectDir)
	if _, err := os.Lstat(dir); err == nil {
		if dir, err = memory.Prepare(b.env.CohortHome, dir); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "Project memory: %s\n", dir)
	if last, err := dream.LastConsolidated(dir); err == nil && !last.IsZero() {
		fmt.Fprintf(w, "Last consolidated: %s\n", last.Format(time.RFC3339))
	} else {
		fmt.Fprintln(w, "Last consolidated: never")
	}
	ix, ok, err := memory.LoadIndex(dir)
	if err != nil {
		return err
	}
	if !ok {
		fmt.Fprintf(w, "No %s yet.\n", memory.IndexName)
		return nil
	}
	note := ""
	if ix.Truncated {
		note = ", over the limits: agents see it truncated"
	}
	fmt.Fprintf(w, "%s (%d lines, %d bytes%s):\n\n%s\n", ix.Path, ix.Lines, ix.Bytes, note, ix.Content)
	return nil
}
