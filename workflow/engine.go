package workflow

import (
	"context"
	"regexp"

	"github.com/cohort-dev/cohort/workflow/host"
)

// Engine is this package as the host process serves it (host.Engine):
// cmd/cohort-workflow is host.Serve with an Engine.
type Engine struct{}

var _ host.Engine = Engine{}

// Run loads req's script and runs it with sp, saved workflows for
// workflow(name) coming from req.Roots.
func (Engine) Run(ctx context.Context, req host.RunRequest, sp host.Spawner, onEvent func(host.Event)) (host.Result, error) {
	s, err := Load(req.Name, req.Source)
	if err != nil {
		return host.Result{}, err
	}
	roots := req.Roots
	return Run(ctx, s, Config{Spawner: sp, Args: req.Args, Dir: req.Dir, Resume: req.Resume,
		Concurrency: req.Concurrency, MaxAgents: req.MaxAgents, MaxItems: req.MaxItems,
		Budget: req.Budget, Timeout: req.Timeout, CPUSlice: req.CPUSlice, OnEvent: onEvent,
		Resolve: func(name string) (*Script, error) { return Find(name, roots...) }})
}

// agentCall finds the agent( call sites in a script's text.
var agentCall = regexp.MustCompile(`(^|[^\w$.])agent\s*\(`)

// Check loads a script and counts its agent() call sites: a floor on the
// agents it starts (a loop or pipeline runs one site many times).
func (Engine) Check(req host.CheckRequest) (host.Checked, error) {
	s, err := Load(req.Name, req.Source)
	if err != nil {
		return host.Checked{}, err
	}
	return host.Checked{Meta: s.Meta, AgentCalls: len(agentCall.FindAllStringIndex(s.Source, -1))}, nil
}

// List lists the saved workflows below req.Roots.
func (Engine) List(req host.ListRequest) ([]host.Saved, error) {
	saved, err := List(req.Roots...)
	if err != nil {
		return nil, err
	}
	out := make([]host.Saved, 0, len(saved))
	for _, s := range saved {
		h := host.Saved{Name: s.Name, Path: s.Path}
		if s.Err != nil {
			h.Error = s.Err.Error()
		} else {
			m := s.Script.Meta
			h.Meta = &m
		}
		out = append(out, h)
	}
	return out, nil
}
