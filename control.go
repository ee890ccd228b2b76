package cohort

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/hook"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/task"
)

// The control methods are safe to call from any goroutine, while a Run is
// going or between Runs. On a closed session they return ErrClosed.

// ErrNoAgent reports an id or name that is no agent of the session.
var ErrNoAgent = errors.New("cohort: no such agent")

// controlWait bounds how long a control call waits for what it stops.
const controlWait = 15 * time.Second

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
	q := s.leadQueue()
	if q == nil {
		return errors.New("cohort: Send: a teammate session takes its input from its mailbox")
	}
	id := s.typed.add(text)
	q.Enqueue(task.Item{Kind: task.ItemUserPrompt, Text: text}.OnAck(func() { s.typed.read(id) }))
	return nil
}

// Pending returns what Send queued that the lead has not read yet, and
// what it has read since the last call with when it read it (each read
// text once), oldest first: a terminal UI shows a text as typed ahead
// until it goes, then puts it where the lead read it.
func (s *Session) Pending() []Typed { return s.typed.list() }

// Typed is a text Send queued; Read is when the lead read it (zero while
// it waits).
type Typed struct {
	Text string
	Read time.Time
}

// typedAhead is the texts Send queued, until Pending has reported them
// read.
type typedAhead struct {
	mu    sync.Mutex
	next  int
	items []typedItem
}

type typedItem struct {
	id int
	Typed
}

func (t *typedAhead) add(text string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.next++
	t.items = append(t.items, typedItem{t.next, Typed{Text: text}})
	return t.next
}

func (t *typedAhead) read(id int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range t.items {
		if t.items[i].id == id && t.items[i].Read.IsZero() {
			t.items[i].Read = time.Now()
		}
	}
}

func (t *typedAhead) list() []Typed {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Typed, len(t.items))
	for i, it := range t.items {
		out[i] = it.Typed
	}
	t.items = slices.DeleteFunc(t.items, func(it typedItem) bool { return !it.Read.IsZero() })
	return out
}

func (s *Session) leadQueue() *task.Queue {
	if s.lead == nil {
		return nil
	}
	return s.lead.Queue()
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
	a := s.mainAgent()
	if err := a.SetMode(m); err != nil {
		return fmt.Errorf("cohort: SetPermissionMode: %w", err)
	}
	s.ctl.mu.Lock()
	s.modeName = string(m)
	s.ctl.mu.Unlock()
	return nil
}

// SetModel switches the lead to model (an id, an alias such as opus, or
// provider/model) from its next request on; the request under way keeps
// its model. Subagents that inherit the lead's model get the new one.
func (s *Session) SetModel(model string) error {
	if s.ctl.isClosed() {
		return ErrClosed
	}
	model = strings.TrimSpace(model)
	if model == "" || strings.HasPrefix(model, scriptedPrefix) {
		return errors.New("cohort: SetModel: give a model id or alias (a scripted model is chosen in Config.Model)")
	}
	s.mainAgent().SetModel(agentdef.ResolveAlias(model, s.model.aliases))
	return nil
}

// mainAgent is the agent this session drives: the lead, or the teammate.
func (s *Session) mainAgent() *crew.Agent {
	if s.mate != nil {
		return s.mate.Agent()
	}
	return s.lead
}

// StopAgent stops one agent by id or name: a subagent or background
// agent is cancelled (its task reports killed), a teammate is asked to
// shut down and then forced. The lead cannot be stopped (Interrupt its
// turn, or Close the session).
func (s *Session) StopAgent(id string) error {
	if s.ctl.isClosed() {
		return ErrClosed
	}
	ctx, cancel := context.WithTimeout(context.Background(), controlWait)
	defer cancel()
	if name, ok := s.teammateName(id); ok {
		return s.team.StopMember(ctx, name, "stopped by the user")
	}
	if t, ok := s.tasks.Get(id); ok && t.Kind() == task.KindWorkflow {
		// A workflow run's node (its task id, or its run id): stopping it
		// stops its agents too.
		if t.State().Status.Terminal() {
			return fmt.Errorf("cohort: StopAgent: workflow run %s is not running", id)
		}
		_, err := s.tasks.Stop(ctx, t.ID())
		return err
	}
	a, err := s.lookup(id)
	if err != nil {
		return err
	}
	if a == s.mainAgent() {
		return fmt.Errorf("cohort: StopAgent: %s is the session's own agent; Interrupt its turn or Close the session", id)
	}
	t := a.Task()
	if t == nil || t.State().Status.Terminal() {
		return fmt.Errorf("cohort: StopAgent: agent %s is not running", id)
	}
	_, err = s.tasks.Stop(ctx, t.ID())
	return err
}

// Background moves a running synchronous subagent to the background: the
// Agent call that waits for it returns at once, and the lead is notified
// when it ends.
func (s *Session) Background(id string) error {
	if s.ctl.isClosed() {
		return ErrClosed
	}
	a, err := s.lookup(id)
	if err != nil {
		return err
	}
	t := a.Task()
	if t == nil {
		return fmt.Errorf("cohort: Background: agent %s is not a running subagent", id)
	}
	return s.tasks.Background(t.ID())
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
	ctx, cancel := context.WithTimeout(context.Background(), controlWait)
	defer cancel()
	if name, ok := s.teammateName(id); ok {
		return s.team.Message(ctx, name, text)
	}
	a, err := s.lookup(id)
	if err != nil {
		return err
	}
	if a == s.lead {
		return s.Send(text)
	}
	_, err = s.rt.Deliver(ctx, a.ID(), llm.Text("A message from the user:\n"+text))
	if errors.Is(err, crew.ErrNoAgent) {
		return fmt.Errorf("%w %q", ErrNoAgent, id)
	}
	return err
}

// Compact replaces the lead's older turns with a summary: at once between
// Runs, or before the lead's next model request while a turn runs.
func (s *Session) Compact(ctx context.Context) error {
	if s.ctl.isClosed() {
		return ErrClosed
	}
	eng := s.mainAgent().Engine()
	if eng == nil {
		return errors.New("cohort: Compact: the conversation has not started")
	}
	if s.ctl.isRunning() {
		eng.RequestCompact()
		return nil
	}
	return eng.Compact(ctx)
}

// Clear forgets the lead's conversation, as /clear does: the next Run
// starts a new one (its memory files and SessionStart hooks, with source
// "clear"). Background agents and teammates keep running. It returns
// ErrBusy while a turn runs.
func (s *Session) Clear() error {
	if s.ctl.isClosed() {
		return ErrClosed
	}
	if s.lead == nil {
		return errors.New("cohort: Clear: a teammate session cannot be cleared")
	}
	s.ctl.mu.Lock()
	defer s.ctl.mu.Unlock()
	if s.ctl.running {
		return ErrBusy
	}
	if eng := s.lead.Engine(); eng != nil {
		if err := eng.Clear(); err != nil {
			return err
		}
	}
	s.ctl.opening = hook.SourceClear
	return nil
}

// lookup finds a runtime agent by id, else by name.
func (s *Session) lookup(id string) (*crew.Agent, error) {
	if s.rt == nil {
		return nil, fmt.Errorf("%w %q", ErrNoAgent, id)
	}
	if a, ok := s.rt.Lookup(id); ok {
		return a, nil
	}
	if a, ok := s.rt.LookupName(id, true); ok {
		return a, nil
	}
	return nil, fmt.Errorf("%w %q", ErrNoAgent, id)
}

// teammateName resolves id (name or name@team) to a member of the team
// this session leads.
func (s *Session) teammateName(id string) (string, bool) {
	if s.team == nil || s.mate != nil {
		return "", false
	}
	name, teamName, _ := strings.Cut(id, "@")
	for _, m := range s.team.Members() {
		if m.Name == name && (teamName == "" || teamName == m.Team) {
			return m.Name, true
		}
	}
	return "", false
}
