package assemble

import (
	"context"
	"fmt"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/dream"
	"github.com/cohort-dev/cohort/flags"
	"github.com/cohort-dev/cohort/memory"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/tool"
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
	dir, err := memory.Prepare(s.Process.Paths.CohortHome, memory.ProjectDir(s.Process.ProjectDir))
	if err != nil {
		fmt.Fprintf(s.Process.Stderr, "cohort: warning: %v; this session runs without project memory\n", err)
		return
	}
	m := &s.mem
	m.dir = dir
	ix, ok, err := memory.LoadIndex(dir, s.deniedRead)
	if err != nil {
		fmt.Fprintf(s.Process.Stderr, "cohort: warning: %v; it is left out of the session\n", err)
	}
	m.index, m.loaded = ix, ok
	m.context = memory.Context(dir, ix, ok)
	s.checker.AddMemoryDir(dir)
	m.sched = dream.NewScheduler(dream.Config{MemoryDir: dir, ProjectDir: s.Process.ProjectDir, SessionID: s.id,
		Gates: dream.Gates{Enabled: s.Settings.Set.Bool(flags.AutoDream), MinHours: s.Settings.Set.Int(flags.AutoDreamMinHours),
			MinSessions: s.Settings.Set.Int(flags.AutoDreamMinSessions)}})
}

// startAutoDream turns on automatic dreams: in a long-lived session
// (Config.AutoDream), never in print mode (StopAfterRun) or a teammate.
func (s *Session) startAutoDream() {
	if !s.Plan.Session.AutoDream || s.Plan.Session.StopAfterRun || s.mem.sched == nil || s.Plan.Session.Teammate != nil {
		return
	}
	s.mem.auto = dream.NewAuto(dream.AutoConfig{Scheduler: s.mem.sched, Start: s.startDream, Logf: s.dreamLog})
}

func (s *Session) dreamLog(format string, args ...any) {
	if s.Process.Verbose {
		fmt.Fprintf(s.Process.Stderr, "cohort: dream: "+format+"\n", args...)
	}
}

// startDream starts the consolidation of a won gate chain as a task.
func (s *Session) startDream(ctx context.Context, t *dream.Ticket) (*task.Task, error) {
	return dream.Start(ctx, dream.Spec{Runtime: s.rt, Ticket: t, MemoryDir: s.mem.dir, ProjectDir: s.Process.ProjectDir,
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
	dir, base, err := memory.AgentDir(def.Memory, def.Name, s.Process.Paths.CohortHome, s.Process.ProjectRoot)
	if err == nil {
		dir, err = memory.Prepare(base, dir)
	}
	if err != nil {
		fmt.Fprintf(s.Process.Stderr, "cohort: warning: agent %s: %v; it runs without its memory\n", def.Name, err)
		return out
	}
	s.checker.AddMemoryDir(dir)
	ix, ok, err := memory.LoadIndex(dir, s.deniedRead)
	if err != nil {
		fmt.Fprintf(s.Process.Stderr, "cohort: warning: agent %s: %v; it is left out of the agent's context\n", def.Name, err)
	}
	if out != "" {
		out += "\n"
	}
	return out + memory.Context(dir, ix, ok)
}

// deniedRead reports whether the session's Read deny rules cover path:
// what Cohort reads into a prompt on its own (memory files and indexes)
// obeys them as the Read tool does (as do the commands and skills it
// reads: expand, openSkills). A session without a checker denies nothing.
func (s *Session) deniedRead(path string) bool {
	return s.checker != nil && s.checker.DeniedRead("", path)
}

// MemoryDir returns the project memory directory of the session ("" when
// it was refused).
func (s *Session) MemoryDir() string { return s.mem.dir }

// Dream runs one consolidation of the project's memory now, skipping
// every gate but the lock, and waits for it; cancelling ctx stops it.
func (s *Session) Dream(ctx context.Context) (task.State, error) {
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
	return s.wait(ctx, t), nil
}
