package assemble

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cohort-dev/cohort/tool"

	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/flags"
	"github.com/cohort-dev/cohort/internal/ownread"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/workflow/host"
	"github.com/cohort-dev/cohort/workflowrun"
)

// workflowConfig wires workflows into the session: runs are kept in the
// session's directory, saved workflows found below the cwd, the project
// root and the home directory, and the plan's budget is each run's (the
// script's budget.total: agent() throws once it is spent).
func (s *Session) workflowConfig(rt *crew.Crew) workflowrun.Config {
	return workflowrun.Config{Runtime: rt, Host: s.workflowHost(),
		Dir: filepath.Join(s.Process.ProjectDir, s.id, "workflows"), Roots: s.workflowRoots(), FindRun: s.findRun,
		Budget: s.Workflows.Budget}
}

// workflowRoots are where saved workflows are found: below the cwd, the
// project root and the home directory.
func (p *Plan) workflowRoots() []string {
	roots := []string{p.Process.Cwd}
	if p.Process.ProjectRoot != p.Process.Cwd {
		roots = append(roots, p.Process.ProjectRoot)
	}
	if p.Process.Paths.Home != "" {
		roots = append(roots, p.Process.Paths.Home)
	}
	return roots
}

// Workflow runs a workflow below the session's own agent and waits for
// it; cancelling ctx stops it. script is a saved workflow's name or a
// script file's path (relative to the cwd); resume is a run to resume from
// its journal (its script.js is rerun unless script replaces it).
func (s *Session) Workflow(ctx context.Context, script string, args json.RawMessage, resume string) (task.State, error) {
	wc := s.workflowConfig(s.rt)
	l := workflowrun.Launch{Args: args, ResumeRunID: resume, Quiet: true}
	if script != "" {
		path := script
		if !strings.ContainsRune(path, '/') && !strings.HasSuffix(path, ".js") {
			p, err := host.FindSaved(path, wc.Roots...)
			if err != nil {
				return task.State{}, err
			}
			path = p
		} else if !filepath.IsAbs(path) {
			path = filepath.Join(s.Process.Cwd, path)
		}
		src, err := ownread.Text(path, ownread.MaxConfig, nil)
		if err != nil {
			return task.State{}, fmt.Errorf("read the workflow script: %w", err)
		}
		l.Source, l.Name = string(src), path
	}
	lead := s.MainAgent()
	r, err := workflowrun.Start(ctx, wc, lead, tool.Env{Caller: lead.Info(), SessionID: s.id}, l)
	if err != nil {
		return task.State{}, err
	}
	t := r.Task()
	return s.wait(ctx, t), nil
}

// findRun finds a run's directory: this session's, else that of the
// project's other session which has it (a run id is drawn at random, so
// at most one does).
func (s *Session) findRun(id string) (string, error) {
	if !host.ValidRunID(id) {
		return "", fmt.Errorf("%q is not a workflow run id (wf and 16 hex digits)", id)
	}
	if dir, err := host.RunDir(filepath.Join(s.Process.ProjectDir, s.id, "workflows"), id); err == nil {
		return dir, nil
	}
	found, _ := filepath.Glob(filepath.Join(s.Process.ProjectDir, "*", "workflows", id, host.ScriptName))
	if len(found) == 0 {
		return "", fmt.Errorf("no workflow run %s in this project's sessions (%s)", id, s.Process.ProjectDir)
	}
	return filepath.Dir(found[0]), nil
}

// SavedWorkflows lists the saved workflows below the workflow roots
// (.claude/workflows and .cohort/workflows), with why any fails to load.
// It asks the cohort-workflow program, which loads them.
func (p *Plan) SavedWorkflows(ctx context.Context) ([]host.Saved, error) {
	return host.List(ctx, p.workflowHost(), p.workflowRoots()...)
}

// openWorkflows decides, once, whether the session's agents get the
// Workflow tool: when the workflows flag is on (its default) and the
// cohort-workflow program is found. When the flag is on and the program
// is not found, it says so on stderr, once, and the session runs without
// the tool.
func (s *Session) openWorkflows() {
	if !s.Settings.Set.Bool(flags.Workflows) {
		return
	}
	if _, err := s.workflowHost().Locate(); err != nil {
		fmt.Fprintf(s.Process.Stderr, "cohort: the Workflow tool is off: %v (or turn the workflows flag off to stop this notice)\n", err)
		return
	}
	s.workflowsOn = true
}

// workflowHost is where the cohort-workflow program is: the plan's, else
// $COHORT_WORKFLOW_HOST, else found by host.Find.
func (p *Plan) workflowHost() host.Config {
	if p.Workflows.Host != "" {
		return host.Config{Path: p.Workflows.Host}
	}
	return host.Config{Path: p.Process.Getenv("COHORT_WORKFLOW_HOST")}
}
