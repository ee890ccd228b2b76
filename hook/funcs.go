package hook

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cohort-dev/cohort/internal/proc"
)

// Func is a hook that runs in the embedding program instead of a shell:
// it gets the JSON a command would read on stdin and returns what a
// command would print on stdout (the same JSON answer; empty means no
// opinion). An error counts as a failed hook that does not block (a
// command's non-2 exit status); to block, answer with a decision.
type Func func(ctx context.Context, input []byte) (output []byte, err error)

// FuncHook is one Go hook for an event, with the matcher a settings entry
// would have ("" matches everything).
type FuncHook struct {
	Event   Event
	Matcher string
	Func    Func
	// Timeout bounds one call (default: the runner's).
	Timeout time.Duration
	// Name labels it in messages and traces ("the SDK's hook 3").
	Name string
}

// FromFuncs returns a Set of Go hooks, or an error naming the first one
// with an unknown event or a matcher that does not compile.
func FromFuncs(hooks []FuncHook) (*Set, error) {
	set := &Set{byEvent: map[Event][]*Command{}}
	for i, h := range hooks {
		if !h.Event.known() {
			msg := fmt.Sprintf("hook %d: unknown event %q", i, h.Event)
			if sug := suggest(string(h.Event)); sug != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", sug)
			}
			return nil, errors.New(msg)
		}
		if h.Func == nil {
			return nil, fmt.Errorf("hook %d (%s): Func is nil", i, h.Event)
		}
		m, err := compileMatcher(h.Matcher)
		if err != nil {
			return nil, fmt.Errorf("hook %d (%s): matcher %q: %v", i, h.Event, h.Matcher, err)
		}
		name := h.Name
		if name == "" {
			name = fmt.Sprintf("Go hook %d", i)
		}
		set.byEvent[h.Event] = append(set.byEvent[h.Event], &Command{Event: h.Event, Matcher: h.Matcher,
			Cmd: name, Timeout: h.Timeout, Source: "Config.Hooks", Key: fmt.Sprintf("Config.Hooks[%d]", i),
			match: m, fn: h.Func})
	}
	return set, nil
}

// runFunc runs a Go hook as run runs a command: its output is the
// command's stdout, an error is exit status 1 with the error as stderr.
func (r *Runner) runFunc(ctx context.Context, c *Command, stdin []byte, timeout time.Duration) ran {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := r.cfg.Now()
	out, err := c.fn(ctx, stdin)
	res := ran{cmd: c, dur: r.cfg.Now().Sub(start), stdout: string(out)}
	switch {
	case ctx.Err() != nil && err != nil:
		res.exit.Code, res.exit.Stopped = -1, proc.ErrTimeout
	case err != nil:
		res.exit.Code, res.stderr = 1, err.Error()
	}
	return res
}
