package assemble

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/checkpoint"
	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/hook"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/transcript"
)

// Turn runs the session's own agent on one prompt: a teammate works on
// its team's prompt and then its mailbox until it is shut down (text is
// unused, the result nil); the lead runs on text and keeps going while
// background tasks will still report, each batch of notifications a new
// turn. opening, when set, is the SessionStart source of a prompt that
// opens the conversation (with the memory files and what the hooks add).
// It returns the model turns taken and the last result; afterwards the
// dream's gates run in the background.
func (s *Session) Turn(ctx context.Context, text, opening string) (int, *engine.Result, error) {
	if s.mate != nil {
		return 0, nil, s.mate.Run(ctx)
	}
	defer s.afterTurn() // the dream's gates: in the background, never in the way
	s.inbound.mu.Lock()
	s.inbound.turns++ // no wake while a Run's turn is under way (wake.go)
	s.inbound.mu.Unlock()
	defer func() {
		s.inbound.mu.Lock()
		s.inbound.turns--
		s.inbound.mu.Unlock()
	}()
	return s.drive(ctx, text, opening)
}

// drive runs the lead on text: see Turn. An empty text is a wake turn
// (wake.go): the lead works on what waits in its queue, with no prompt of
// the user's (no expansion, no UserPromptSubmit, no checkpoint); with
// nothing waiting it returns at once.
func (s *Session) drive(ctx context.Context, text, opening string) (int, *engine.Result, error) {
	wake := text == ""
	if wake && s.lead.Queue().Len() == 0 {
		return 0, &engine.Result{Stop: engine.StopSuccess}, nil // a Run read it first
	}
	s.startDrive()
	defer s.endDrive("is idle")
	if !wake {
		s.snapshot(checkpoint.Before, text) // while the first request streams
		defer s.snapshot(checkpoint.After, "")
	}
	lead := s.lead.Engine()
	scope := s.hookScope(s.lead)
	var content []llm.Block
	var opened int // how many of content's blocks open the conversation
	var started *llm.Block
	if opening != "" {
		start := scope.SessionStart(ctx, opening, s.lead.Info().Model)
		s.hookMessages(start)
		s.instructionsLoaded(ctx, scope, hook.LoadSessionStart)
		started = hookContextBlock(start.Context)
	}
	var prompt, expanded []string
	if !wake {
		var err error
		if prompt, expanded, err = s.expand(ctx, scope, text, false); err != nil {
			return 0, nil, err
		}
	}
	switch {
	case lead != nil && lead.Mark().Messages() > 0:
		// A resumed conversation, or one under way: its history holds
		// its opening already.
		content = userBlocks(nil, prompt...)
	case opening != "" || lead != nil:
		// The first prompt, after a clear, or after a rewind to before
		// the first prompt: the conversation opens (again) with the
		// agent's opening blocks (its memory).
		opened = len(s.lead.Opening())
		content = userBlocks(s.lead.Opening(), prompt...)
	default:
		content = userBlocks(nil, prompt...)
	}
	if started != nil {
		content = append(content, *started)
	}
	if b := hookContextBlock(expanded); b != nil {
		content = append(content, *b)
	}
	if !wake {
		if out := scope.UserPromptSubmit(ctx, text); out.Block || out.Stop {
			return 0, nil, fmt.Errorf("the prompt was blocked by a UserPromptSubmit hook: %s", firstNonEmpty(out.Reason, out.StopReason))
		} else if len(out.Context) > 0 {
			content = append(content, llm.Text(hookContext(out.Context)))
		}
	}
	content = append(content, s.schemaInstruction()...)
	turns, stopActive, answers := 0, false, 0
	s.structured = nil
	parts := s.afterWaiting(content, opened)
	for {
		turnEnded := s.usage.leadTurn()
		res, err := s.leadTurn(ctx, lead, parts)
		turnEnded()
		if res != nil {
			turns += res.Turns
		}
		if err == nil && res.Stop == engine.StopBudget {
			// Capped: what the lead's agents report still reaches it (each
			// Send records it and sends nothing while the cap holds), so a
			// later run finds it in the conversation.
			next, ok, qerr := s.awaitQueue(ctx)
			if qerr == nil && ok {
				parts = next
				continue
			}
			if res.Capped != nil {
				res.Text = strings.TrimSpace(res.Text + "\n\n[Stopped: " + res.Capped.Error() + ".]")
			}
			return turns, res, qerr
		}
		if err != nil {
			s.turnFailed(ctx, scope, res, err)
		}
		if err != nil || res.Stop != engine.StopSuccess {
			return turns, res, err
		}
		// A Stop hook may keep the lead going, with its reason as input.
		st := hook.StopState{Active: stopActive, LastMessage: res.Text, Background: s.background()}
		if out := scope.Stop(ctx, st); out.Block && !out.Stop {
			parts, stopActive = []engine.Part{{Content: []llm.Block{llm.Text(hookContext([]string{"A Stop hook asks you to continue: " + out.Reason}))}, Origin: transcript.OriginSystem}}, true
			continue
		}
		stopActive = false
		next, ok, err := s.awaitQueue(ctx)
		if err != nil {
			return turns, res, err
		}
		if !ok {
			if s.TestHookLastLook != nil {
				s.TestHookLastLook()
			}
			if fix := s.schemaRetry(res, &answers); fix != nil {
				parts = fix // the JSON schema: ask again
				continue
			}
			if more := s.lastLook(); more != nil {
				parts = more // came as the drive was ending: read, not dropped
				continue
			}
			return turns, res, nil
		}
		parts = next
	}
}

// turnFailed fires the hooks of a lead's turn that ended with err:
// Interrupt when its context ended first (by the user, or "system" for a
// deadline), else StopFailure with the error's kind. The hooks run past
// the turn's end, bounded by their own timeouts.
func (s *Session) turnFailed(ctx context.Context, scope *hook.Scope, res *engine.Result, err error) {
	last := ""
	if res != nil {
		last = res.Text
	}
	after := context.WithoutCancel(ctx)
	if ctx.Err() != nil {
		source := hook.InterruptUser
		if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			source = hook.InterruptSystem
		}
		s.hookMessages(scope.Interrupt(after, source, hook.InterruptStop, ""))
		return
	}
	// With no text from the model, the last message is the error, as in
	// Claude Code (which shows it as the assistant's message).
	s.hookMessages(scope.StopFailure(after, hook.Failure{Kind: hook.ErrorKind(err), Details: err.Error(), LastMessage: cmp.Or(last, err.Error())}))
}

// background is the session's background work still running, for Stop
// hooks.
func (s *Session) background() []hook.BackgroundTask {
	var out []hook.BackgroundTask
	for _, t := range s.tasks.Running() {
		if !t.IsBackgrounded {
			continue
		}
		out = append(out, hook.BackgroundTask{ID: t.ID, Type: string(t.Kind), Status: string(t.Status),
			Description: t.Description, Command: t.Command, AgentType: t.SubagentType})
	}
	return out
}

// afterWaiting is the first input of a lead's run: the user's content,
// with what waited in the lead's queue before the prompt was given (the
// notifications of tasks that died with an earlier process, on a resume)
// placed after the conversation's opening blocks and before the prompt, so
// the model reads them before it answers rather than after.
func (s *Session) afterWaiting(content []llm.Block, opened int) []engine.Part {
	waiting := crew.QueueParts(s.lead.Queue().Take())
	if len(waiting) == 0 {
		return []engine.Part{{Content: content}} // the user's
	}
	var parts []engine.Part
	if opened > 0 {
		// Capped at opened: a part the engine appends to must not write
		// over the prompt that follows in content.
		parts = append(parts, engine.Part{Content: content[:opened:opened]})
	}
	parts = append(parts, waiting...)
	if len(content) == opened {
		return parts // a wake turn: no prompt after what waited
	}
	return append(parts, engine.Part{Content: content[opened:]})
}

// hookMessages shows what hooks said for the user (systemMessage, failures)
// on stderr.
func (s *Session) hookMessages(o hook.Outcome) {
	for _, m := range o.Messages {
		fmt.Fprintf(s.Process.Stderr, "cohort: hook: %s\n", m)
	}
}

// hookContextBlock is hook output for the model as one block, or nil.
func hookContextBlock(parts []string) *llm.Block {
	if len(parts) == 0 {
		return nil
	}
	b := llm.Text(hookContext(parts))
	return &b
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

// teamPoll is how often an idle lead re-checks its team's state when no
// change has woken it: a safety net under the team layer's change signal
// (fsnotify on the status files), which can drop events under overflow.
const teamPoll = time.Second

// awaitQueue waits until the lead's queue holds something and returns it,
// each item with its origin, or returns false once nothing can arrive any
// more (no outstanding background task, no busy teammate, no idle notice
// a one-shot session awaits: notices.go).
func (s *Session) awaitQueue(ctx context.Context) ([]engine.Part, bool, error) {
	q := s.lead.Queue()
	waited := false
	for {
		// Outstanding and busy first: a task stops counting only after its
		// notification is enqueued, a teammate stops counting as busy
		// only after what it had for the lead is queued or in the lead's
		// inbox, and a notice stops being awaited in the step that queues
		// it, so nothing can slip between the checks.
		changed := s.teamChanged()
		outstanding := s.tasks.Outstanding(q)
		busy := s.teamBusy()
		notices := s.noticesAwaited(ctx, q.Len() == 0)
		if q.Len() > 0 {
			if waited {
				s.coalesce(ctx, q)
			}
			return crew.QueueParts(q.Take()), true, nil
		}
		if outstanding == 0 && !busy && notices == 0 {
			return nil, false, nil
		}
		select {
		case <-q.Ready():
		case <-changed:
			// Teammates' states change without touching the queue.
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case <-time.After(teamPoll):
		}
		waited = true
	}
}

// Coalescing an idle lead's wake-up: what arrives within coalesceQuiet of
// the previous item (up to coalesceMax in all) joins the same turn.
// COHORT_NOTIFY_COALESCE sets the quiet window ("0" turns it off).
const (
	defaultCoalesceQuiet = 25 * time.Millisecond
	coalesceMaxFactor    = 8
)

// coalesce holds an idle lead's wake-up briefly so that notifications
// arriving together make one turn. Agents started together tend to finish
// together, and every wake-up is a model turn that re-sends the lead's whole
// history: with a fast model, a thousand agents finishing in a trickle
// cost hundreds of lead turns where a handful would do. It returns once
// nothing new has arrived for the quiet window, after eight windows in all,
// or at once when nothing more can arrive (no task outstanding, the team
// not busy, no idle notice awaited).
func (s *Session) coalesce(ctx context.Context, q *task.Queue) {
	quiet := s.coalesceQuiet()
	if quiet <= 0 {
		return
	}
	deadline := time.Now().Add(coalesceMaxFactor * quiet)
	n := q.Len()
	for {
		if s.tasks.Outstanding(q) == 0 && !s.teamBusy() && s.noticesAwaited(ctx, false) == 0 {
			return
		}
		wait := min(quiet, time.Until(deadline))
		if wait <= 0 {
			return
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		m := q.Len()
		if m == n {
			return
		}
		n = m
	}
}

// coalesceQuiet is the quiet window: COHORT_NOTIFY_COALESCE when set (a
// duration; "0" turns coalescing off), else the default. A value that is
// not a duration is reported once and the default used.
func (s *Session) coalesceQuiet() time.Duration {
	s.quiet.Do(func() {
		s.quietD = defaultCoalesceQuiet
		v := s.Process.Getenv("COHORT_NOTIFY_COALESCE")
		if v == "" {
			return
		}
		if v == "0" {
			s.quietD = 0
			return
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			fmt.Fprintf(s.Process.Stderr, "cohort: warning: COHORT_NOTIFY_COALESCE=%q is not a duration such as 25ms (or 0 to turn it off); using %s\n", v, defaultCoalesceQuiet)
			return
		}
		s.quietD = d
	})
	return s.quietD
}

// userBlocks renders a prompt (its texts, a block each, as expand made
// them) as the first (or a later) user message. A wake turn's (empty)
// prompt adds no block.
func userBlocks(opening []llm.Block, texts ...string) []llm.Block {
	out := append([]llm.Block(nil), opening...)
	for _, text := range texts {
		if text != "" {
			out = append(out, llm.Text(text))
		}
	}
	return out
}
