package cohort

import (
	"context"
	"encoding/json"
	"iter"
	"time"

	"github.com/cohort-dev/cohort/dream"
	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/task"
)

// WorkflowRequest is a workflow to run outside a conversation (cohort
// workflow run and resume): no lead model is asked anything.
type WorkflowRequest struct {
	// Script is a saved workflow's name, or the path of a script file (it
	// has a slash or ends in .js; relative to the session's directory).
	Script string
	// Args are the script's args, verbatim JSON.
	Args json.RawMessage
	// Resume is the id of a run to resume from its journal: of this
	// session, or of an earlier one of the project (one that was killed).
	// Its script.js is rerun as it is now, unless Script replaces it.
	Resume string
}

// RunWorkflow runs a workflow script in the session and yields the events
// of its task and its agents until it ends, then a result whose text is
// the script's return value and the cost per phase (IsError when the
// script failed, with the line it failed at).
func (s *Session) RunWorkflow(ctx context.Context, req WorkflowRequest) iter.Seq2[Event, error] {
	return s.serve(ctx, false, nil, func(ctx context.Context, _ string) Event {
		start := time.Now()
		st, err := s.parts.Workflow(ctx, req.Script, req.Args, req.Resume)
		r := taskResult(st, err, "workflow run "+st.ID)
		s.finish(&r, start)
		return r
	})
}

// Dream consolidates the project's memory now (cohort dream), skipping
// every gate but the lock, and yields the dream's events until it ends,
// then a result whose text names the memory files it touched. It waits
// for the dream; breaking out of the loop or cancelling ctx stops it (the
// lock is rolled back). Like Run, one at a time.
func (s *Session) Dream(ctx context.Context) iter.Seq2[Event, error] {
	return s.serve(ctx, false, nil, func(ctx context.Context, _ string) Event {
		start := time.Now()
		st, err := s.parts.Dream(ctx)
		r := taskResult(st, err, "the consolidation")
		if d, ok := st.Detail.(dream.Detail); ok && !r.IsError {
			r.NumTurns = d.Turns
		}
		s.finish(&r, start)
		return r
	})
}

// taskResult is the result event of a task run to its end: its text, or
// what went wrong (what names the task).
func taskResult(st task.State, err error, what string) Event {
	r := Event{Type: EventResult, Subtype: engine.StopSuccess}
	switch {
	case err != nil:
		r.Subtype, r.IsError, r.Result = engine.StopExecution, true, err.Error()
	case st.Status != task.StatusCompleted:
		r.Subtype, r.IsError, r.Result = engine.StopExecution, true, what+" "+string(st.Status)+": "+st.Err
	default:
		r.Result = st.Result.Text
	}
	return r
}

// SavedWorkflow is a saved workflow script as Inspection.Workflows finds
// it.
type SavedWorkflow struct {
	Name        string
	Path        string
	Description string
	Err         string // why it does not load; empty when it does
}
