package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/session"
)

// maxStdinPrompt bounds a prompt read from stdin.
const maxStdinPrompt = 10 << 20

func runRoot(ctx context.Context, inv *Invocation, o *options, args []string) error {
	if err := o.validate(); err != nil {
		return err
	}
	if !o.print {
		return usageErr(`interactive mode is not available in this build yet; run a job in print mode: cohort -p "your prompt" (or try: cohort demo)`)
	}
	text := strings.Join(args, " ")
	if text == "" && inv.Stdin != nil {
		data, err := io.ReadAll(io.LimitReader(inv.Stdin, maxStdinPrompt))
		if err != nil {
			return usageErr("read the prompt from stdin: %v", err)
		}
		text = strings.TrimSpace(string(data))
	}
	if text == "" {
		return usageErr(`no prompt: pass it as an argument (cohort -p "…") or on stdin`)
	}
	b, err := loadBase(ctx, inv, o)
	if err != nil {
		return err
	}
	out := newPrinter(inv.Stdout, inv.Stderr, o.outputFormat, o.verbose)
	s, err := openSession(ctx, b, out)
	if err != nil {
		return err
	}
	defer s.close()
	out.init(initLine{Cwd: s.cwd, Tools: s.lead.ToolNames(), Model: s.lead.Model,
		PermissionMode: s.modeName, APIKeySource: apiKeySource(inv.Getenv, s.model.name)})
	start := time.Now()
	turns, res, runErr := s.drive(ctx, text)
	s.endTeam()
	// Stop what still runs before the result, so that the result is the
	// last line of stream-json (killed tasks report first).
	s.stopTasks()
	r := resultLine{Subtype: engine.StopSuccess, NumTurns: turns, DurationMs: time.Since(start).Milliseconds()}
	switch {
	case runErr != nil:
		r.Subtype, r.IsError = engine.StopExecution, true
		r.Result = runErr.Error()
		if errors.Is(runErr, context.Canceled) {
			r.Result = "interrupted: the run was cancelled"
		}
	case res.Stop != engine.StopSuccess:
		r.Subtype, r.IsError, r.Result = res.Stop, true, res.Text
	default:
		r.Result = res.Text
	}
	out.result(r)
	if r.IsError {
		return &exitError{code: 1}
	}
	return nil
}

// drive runs the lead on text, then keeps it going while background tasks
// will still report: each batch of notifications is a new turn. It returns
// the turns taken and the last Send's result.
func (s *sess) drive(ctx context.Context, text string) (int, *engine.Result, error) {
	lead := s.lead.Engine()
	scope := s.hookScope(s.lead.Agent)
	content, origin := userBlocks(s.lead.Opening, text), ""
	if out := scope.UserPromptSubmit(ctx, text); out.Block || out.Stop {
		return 0, nil, fmt.Errorf("the prompt was blocked by a UserPromptSubmit hook: %s", firstNonEmpty(out.Reason, out.StopReason))
	} else if len(out.Context) > 0 {
		content = append(content, llm.Text(hookContext(out.Context)))
	}
	turns, stopActive := 0, false
	for {
		res, err := lead.Send(ctx, content, origin)
		if res != nil {
			turns += res.Turns
		}
		if err != nil || res.Stop != engine.StopSuccess {
			return turns, res, err
		}
		// A Stop hook may keep the lead going, with its reason as input.
		if out := scope.Stop(ctx, stopActive); out.Block && !out.Stop {
			content, origin, stopActive = []llm.Block{llm.Text(hookContext([]string{"A Stop hook asks you to continue: " + out.Reason}))}, session.OriginSystem, true
			continue
		}
		stopActive = false
		next, ok, err := s.awaitQueue(ctx)
		if err != nil {
			return turns, res, err
		}
		if !ok {
			return turns, res, nil
		}
		content, origin = next, session.OriginNotification
	}
}

// hookContext wraps hook output for the model.
func hookContext(parts []string) string {
	return "<system-reminder>\n" + strings.Join(parts, "\n") + "\n</system-reminder>"
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// teamPoll is how often an idle lead re-checks its team's state.
const teamPoll = 200 * time.Millisecond

// awaitQueue waits until the lead's queue holds something, or returns false
// once nothing can arrive any more (no outstanding background task).
func (s *sess) awaitQueue(ctx context.Context) ([]llm.Block, bool, error) {
	q := s.lead.Queue
	for {
		// Outstanding and busy first: a task stops counting only after its
		// notification is enqueued, and a teammate stops counting as busy
		// only after what it had for the lead is queued or in the lead's
		// inbox, so nothing can slip between the checks.
		outstanding := s.tasks.Outstanding(q)
		busy := s.teamBusy()
		if q.Len() > 0 {
			var blocks []llm.Block
			for _, it := range q.Drain() {
				blocks = append(blocks, llm.Text(it.ModelText()))
			}
			return blocks, true, nil
		}
		if outstanding == 0 && !busy {
			return nil, false, nil
		}
		select {
		case <-q.Ready():
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case <-time.After(teamPoll):
			// Teammates' states change without touching the queue.
		}
	}
}

func apiKeySource(getenv func(string) string, model string) string {
	switch {
	case model == "scripted":
		return "none"
	case getenv("ANTHROPIC_API_KEY") != "":
		return "ANTHROPIC_API_KEY"
	case getenv("ANTHROPIC_AUTH_TOKEN") != "":
		return "ANTHROPIC_AUTH_TOKEN"
	}
	return "none"
}
