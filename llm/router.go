package llm

import (
	"context"
	"fmt"
	"iter"
	"strings"
)

// Router is a Model that sends each request to the model its id names, so
// that agents of one session can run on different providers: a lead on
// Claude, its Explore agents on a local model. A request whose Model is
// "NAME/ID", where NAME is a key of Routes, goes to that route with Model
// ID; the response's Model is then "NAME/" and what the route reported, so
// prices and reports name the route. Any other id, slashes included (a
// gateway's "meta-llama/llama-3-70b"), goes to Default unchanged.
//
// A Router is safe for concurrent use when its models are; it must not be
// changed once in use.
type Router struct {
	Default Model
	Routes  map[string]Model
}

var _ Model = (*Router)(nil)

// Stream implements Model.
func (r *Router) Stream(ctx context.Context, req *Request) iter.Seq2[Event, error] {
	m, routed, name := r.Default, req, ""
	prefix, id, ok := strings.Cut(req.Model, "/")
	if rm, known := r.Routes[prefix]; ok && known && rm != nil {
		clone := *req
		clone.Model = id
		m, routed, name = rm, &clone, prefix
	}
	if m == nil {
		return func(yield func(Event, error) bool) {
			yield(Event{}, fmt.Errorf("llm: no model serves %q (no default model, and no route for its prefix)", req.Model))
		}
	}
	if name == "" {
		return m.Stream(ctx, routed)
	}
	return func(yield func(Event, error) bool) {
		for ev, err := range m.Stream(ctx, routed) {
			if ev.Type == EventDone && ev.Response != nil {
				resp := *ev.Response
				if resp.Model == "" {
					resp.Model = id
				}
				resp.Model = name + "/" + resp.Model
				ev.Response = &resp
			}
			if !yield(ev, err) {
				return
			}
		}
	}
}

// Failing is a Model whose every stream fails with Err: a route whose
// provider is not configured, reported when an agent first uses it.
type Failing struct{ Err error }

// Stream implements Model.
func (f Failing) Stream(context.Context, *Request) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) { yield(Event{}, f.Err) }
}
