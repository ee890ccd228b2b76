package cohort

import (
	"context"
	"errors"
	"fmt"
	"github.com/cohort-dev/cohort/checkpoint"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/internal/assemble"
	"github.com/cohort-dev/cohort/permission"
)

// The control methods are safe to call from any goroutine, while a Run is
// going or between Runs. On a closed session they return ErrClosed.

// ErrNoAgent reports an id or name that is no agent of the session.
var ErrNoAgent = errors.New("cohort: no such agent")

// Send queues text for the lead, as typing ahead does: while a turn runs
// the lead reads it at its next tool-result boundary (or, idle and waiting
// for background agents, wakes with it); between Runs it joins the next
// Run's prompt.
func (s *Session) Send(text string) error {
	if s.ctl.isClosed() {
		return ErrClosed
	}
	if strings.TrimSpace(text) == "" {
		return errors.New("cohort: Send: the text is empty")
	}
	if s.cfg.Role.IsTeammate() {
		return errors.New("cohort: Send: a teammate session takes its input from its mailbox")
	}
	return s.parts.Send(text)
}

// Pending returns what Send queued that the lead has not read yet, and
// what it has read since the last call with when it read it (each read
// text once), oldest first: a terminal UI shows a text as typed ahead
// until it goes, then puts it where the lead read it.
func (s *Session) Pending() []Typed {
	var out []Typed
	for _, t := range s.parts.Pending() {
		out = append(out, Typed(t))
	}
	return out
}

// Typed is a text Send queued; Read is when the lead read it (zero while
// it waits).
type Typed struct {
	Text string
	Read time.Time
}

// Interrupt stops the lead's running turn, as Esc does: the Run ends with
// an error result ("interrupted"); synchronous subagents stop with the
// turn, background agents and teammates keep running. Without a running
// turn it does nothing.
func (s *Session) Interrupt() error {
	if s.ctl.isClosed() {
		return ErrClosed
	}
	s.ctl.interrupt()
	return nil
}

// SetPermissionMode changes the lead's permission mode (default,
// acceptEdits, plan, dontAsk, bypassPermissions) from its next tool call
// on. Agents it spawns later start from the new mode; running ones keep
// theirs.
func (s *Session) SetPermissionMode(mode string) error {
	if s.ctl.isClosed() {
		return ErrClosed
	}
	m, err := permission.ParseMode(mode)
	if err != nil {
		return fmt.Errorf("cohort: SetPermissionMode: %w", err)
	}
	if err := s.parts.SetMode(m); err != nil {
		return fmt.Errorf("cohort: SetPermissionMode: %w", err)
	}
	s.ctl.mu.Lock()
	s.mode = string(m)
	s.ctl.mu.Unlock()
	return nil
}

// SetModel switches the lead to model (an id, an alias such as opus, or
// provider/model) from its next request on; the request under way keeps
// its model. Subagents that inherit the lead's model get the new one. A
// PreModelSwitch hook may refuse the switch.
func (s *Session) SetModel(model string) error { return s.SetModelFrom(model, "sdk") }

// SetModelFrom is SetModel saying who asked, as the model switch hooks'
// source: "command" (a front end's /model name), "picker" or "sdk".
func (s *Session) SetModelFrom(model, source string) error {
	if s.ctl.isClosed() {
		return ErrClosed
	}
	model = strings.TrimSpace(model)
	if model == "" || strings.HasPrefix(model, "scripted:") {
		return errors.New("cohort: SetModel: give a model id or alias (a scripted model is chosen in Config.Model)")
	}
	return controlErr("SetModel", s.parts.SetModel(model, source))
}

// StopAgent stops one agent by id or name: a subagent or background
// agent is cancelled (its task reports killed), a teammate is asked to
// shut down and then forced. The lead cannot be stopped (Interrupt its
// turn, or Close the session).
func (s *Session) StopAgent(id string) error {
	if s.ctl.isClosed() {
		return ErrClosed
	}
	return controlErr("StopAgent", s.parts.StopAgent(id))
}

// Background moves a running synchronous subagent to the background: the
// Agent call that waits for it returns at once, and the lead is notified
// when it ends.
func (s *Session) Background(id string) error {
	if s.ctl.isClosed() {
		return ErrClosed
	}
	return controlErr("Background", s.parts.Background(id))
}

// Message sends text to one agent as the user: a teammate (by name or
// id) gets it in its mailbox; a subagent or background agent at its next
// step (one that has finished is resumed in the background with it); the
// lead as Send.
func (s *Session) Message(id, text string) error {
	if s.ctl.isClosed() {
		return ErrClosed
	}
	if strings.TrimSpace(text) == "" {
		return errors.New("cohort: Message: the text is empty")
	}
	toLead, err := s.parts.Message(id, text)
	if toLead {
		return s.Send(text)
	}
	return controlErr("Message", err)
}

// controlErr words an error of a control method: an unknown agent is
// ErrNoAgent, a refusal names the method.
func controlErr(method string, err error) error {
	var r assemble.Refused
	switch {
	case errors.Is(err, assemble.ErrNoAgent):
		return fmt.Errorf("%w%s", ErrNoAgent, strings.TrimPrefix(err.Error(), assemble.ErrNoAgent.Error()))
	case errors.As(err, &r):
		return fmt.Errorf("cohort: %s: %s", method, r)
	}
	return err
}

// Compact replaces the lead's older turns with a summary: at once between
// Runs, or before the lead's next model request while a turn runs.
func (s *Session) Compact(ctx context.Context) error {
	if s.ctl.isClosed() {
		return ErrClosed
	}
	return s.parts.Compact(ctx, s.ctl.isRunning())
}

// Clear forgets the lead's conversation, as /clear does: the next Run
// starts a new one (its memory files and SessionStart hooks, with source
// "clear"). Background agents and teammates keep running. It returns
// ErrBusy while a turn runs.
func (s *Session) Clear() error {
	if s.ctl.isClosed() {
		return ErrClosed
	}
	if s.cfg.Role.IsTeammate() {
		return errors.New("cohort: Clear: a teammate session cannot be cleared")
	}
	s.ctl.mu.Lock()
	defer s.ctl.mu.Unlock()
	if s.ctl.running {
		return ErrBusy
	}
	return s.parts.ClearLead(&s.ctl.opening)
}

// TaskOutput reads the end of a background shell task's output (its last
// 8 KiB at most) and the size of the whole in bytes; id is the task id of
// its task_started event. Another kind of task is refused.
func (s *Session) TaskOutput(id string) (tail string, total int64, err error) {
	if s.ctl.isClosed() {
		return "", 0, ErrClosed
	}
	b, n, err := s.parts.ShellOutput(id)
	return string(b), n, controlErr("TaskOutput", err)
}

// ContextUsage is what the lead's next request holds, part by part, in
// estimated tokens.
type ContextUsage = engine.ContextUsage

// ContextUsage measures the session's own agent's conversation now
// (before its first request, only Model is set).
func (s *Session) ContextUsage() (ContextUsage, error) {
	a := s.parts.MainAgent()
	if s.ctl.isClosed() || a == nil {
		return ContextUsage{}, ErrClosed
	}
	if e := a.Engine(); e != nil {
		return e.ContextUsage(), nil
	}
	return ContextUsage{Model: a.Info().Model}, nil
}

// RewindRequest asks to put files back as before a lead's turn (checkpoint).
type RewindRequest = checkpoint.Rewind

// RewindReport is what a rewind would do or did.
type RewindReport = checkpoint.Report

// Rewind rewinds the session's files, stopping its background agents and
// teammates first; ErrBusy while a Run is going.
func (s *Session) Rewind(ctx context.Context, r RewindRequest) (*RewindReport, error) {
	ctx, _, err := s.ctl.begin(ctx, false, nil)
	if err != nil {
		return nil, err
	}
	defer s.ctl.driver.Done()
	defer s.ctl.end()
	return s.parts.Rewind(ctx, r)
}

// StatusLine returns the settings' statusLine command, "" for none; RunStatusLine runs it with stdin and
// returns its stdout: in the session's sandbox, as a command hook, unless "sandbox": false is honoured.
func (s *Session) StatusLine() string { return s.parts.StatusLine() }
func (s *Session) RunStatusLine(ctx context.Context, stdin []byte) ([]byte, error) {
	return s.parts.RunStatusLine(ctx, stdin)
}
