package llm

import (
	"context"
	"errors"
	"iter"
	"sync"
)

// Fallback is a Model that moves the requests for one model to another when
// the first cannot serve them: a request for Primary that fails, before any
// of its response arrived, because the model is overloaded (529,
// overloaded_error, after the provider's own retries) or does not exist
// (404, not_found_error) is sent again for Secondary, and from then on every
// request for Primary goes to Secondary directly, so that later turns do not
// pay for the same failures again. Requests for other models pass through.
// This is Claude Code's --fallback-model.
//
// Safe for concurrent use when Model is; the fields must not change once it
// is in use.
type Fallback struct {
	Model              Model
	Primary, Secondary string
	// OnSwitch, when set, is called once, with the failure that moved the
	// requests.
	OnSwitch func(err error)

	mu       sync.Mutex
	switched bool
}

var _ Model = (*Fallback)(nil)

// Stream implements Model.
func (f *Fallback) Stream(ctx context.Context, req *Request) iter.Seq2[Event, error] {
	if req.Model != f.Primary || f.Secondary == "" {
		return f.Model.Stream(ctx, req)
	}
	return func(yield func(Event, error) bool) {
		if !f.isSwitched() {
			content := false // a response began since the last retry
			for ev, err := range f.Model.Stream(ctx, req) {
				if err != nil && !content && FallbackWorthy(err) {
					f.switchOnce(err)
					break
				}
				content = ev.Type != EventRetry
				if !yield(ev, err) || err != nil {
					return
				}
			}
			if !f.isSwitched() {
				return
			}
		}
		moved := *req
		moved.Model = f.Secondary
		for ev, err := range f.Model.Stream(ctx, &moved) {
			if !yield(ev, err) {
				return
			}
		}
	}
}

func (f *Fallback) isSwitched() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.switched
}

func (f *Fallback) switchOnce(err error) {
	f.mu.Lock()
	first := !f.switched
	f.switched = true
	f.mu.Unlock()
	if first && f.OnSwitch != nil {
		f.OnSwitch(err)
	}
}

// FallbackWorthy reports whether err says the model cannot serve the
// request at all (overloaded, or no such model), as opposed to a request or
// account problem another model would have too.
func FallbackWorthy(err error) bool {
	var ae *APIError
	if !errors.As(err, &ae) {
		return false
	}
	return ae.StatusCode == 529 || ae.Type == "overloaded_error" || ae.StatusCode == 404 || ae.Type == "not_found_error"
}
