package assemble

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/hook"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/mcp"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/task"
)

// stopWait bounds how long the session waits for something it stops.
const stopWait = 15 * time.Second

// ErrNoAgent reports an id or name that is no agent of the session.
var ErrNoAgent = errors.New("no such agent")

// Refused is a control call the session's state refuses (an agent not
// running, the session's own agent), in words for the caller.
type Refused string

func (r Refused) Error() string { return string(r) }

func refused(format string, args ...any) error { return Refused(fmt.Sprintf(format, args...)) }

// ID is the session's id.
func (s *Session) ID() string { return s.id }

// LeadID is the lead's agent id ("" in a teammate's session).
func (s *Session) LeadID() string {
	if s.lead == nil {
		return ""
	}
	return s.lead.ID()
}

// Resumed reports whether the session continues an earlier one.
func (s *Session) Resumed() bool { return s.resumed != nil }

// StartSource is the SessionStart source of the session's first prompt,
// as Claude Code 2.1.332 names it: startup, resume, or fork for a resumed
// conversation under a new id (ForkSession).
func (s *Session) StartSource() string {
	switch {
	case s.resumed == nil:
		return hook.SourceStartup
	case s.Plan.Session.ForkFrom != "":
		return hook.SourceFork
	}
	return hook.SourceResume
}

// MainAgent is the agent this session drives: the lead, or the teammate.
func (s *Session) MainAgent() *crew.Agent {
	if s.mate != nil {
		return s.mate.Agent()
	}
	return s.lead
}

// DefaultMode is the session's permission mode as configured (the
// checker's; an agent definition may start the lead in another).
func (s *Session) DefaultMode() permission.Mode { return s.checker.Mode() }

// Structured is the last turn's answer under the plan's JSON schema.
func (s *Session) Structured() []byte { return s.structured }

// KeySource names where the lead's credential comes from.
func (s *Session) KeySource() string { return s.keySource() }

// ScriptedModel is the fake API of a session on a scripted model (nil on a
// real model).
func (s *Session) ScriptedModel() *fakeapi.Server { return s.model.fake }

// Aliases are the session's model aliases.
func (s *Session) Aliases() map[string]string { return s.model.aliases }

// Catalog is the session's agent definitions (nil before it loaded them).
func (s *Session) Catalog() *agentdef.Catalog { return s.cat }

// Skills are the names of the session's skills.
func (s *Session) Skills() []string {
	var out []string
	for _, sk := range s.skills.Load().All() {
		out = append(out, sk.Name)
	}
	return out
}

// AdditionalDirs are the working directories beside the cwd that the
// agents may work in (the plan's and the settings'
// additionalDirectories), as Claude Code's system/init lists them: not
// those inside the cwd, which add nothing to it.
func (s *Session) AdditionalDirs() []string {
	dirs := s.checker.WorkingDirs()
	var out []string
	for _, d := range dirs[min(1, len(dirs)):] {
		if rel, err := filepath.Rel(dirs[0], d); err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			out = append(out, d)
		}
	}
	return out
}

// Statuses are the session's MCP servers and their states.
func (s *Session) Statuses() []mcp.Status { return s.mcp.Statuses() }

// Send queues text for the lead, as typing ahead does: the lead reads it
// at its next tool-result boundary, or with the next prompt. A text that
// names one of the project's custom commands is expanded now, after its
// UserPromptExpansion hooks, as a prompt is (expand): a hook that blocks
// it refuses it with an error. An error without a lead (a teammate
// session reads its mailbox).
func (s *Session) Send(text string) error {
	if s.lead == nil {
		return errors.New("cohort: Send: a teammate session takes its input from its mailbox")
	}
	prompt, extra, err := s.expand(context.Background(), s.hookScope(s.lead), text, true)
	if err != nil {
		return fmt.Errorf("cohort: %w", err)
	}
	if b := hookContextBlock(extra); b != nil {
		prompt = append(prompt, b.Text)
	}
	for i, p := range prompt {
		prompt[i] = strings.TrimRight(p, " \t\r\n") // one paragraph each
	}
	id := s.typed.add(text)
	item := task.Item{Kind: task.ItemUserPrompt, Text: strings.Join(prompt, "\n\n")}
	s.lead.Queue().Enqueue(item.OnAck(func() { s.typed.read(id) }))
	return nil
}

// Pending is what Send queued that the lead has not read yet, and what it
// has read since the last call with when it read it (each read text once),
// oldest first.
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

// SetMode changes the session's own agent's permission mode from its next
// tool call on.
func (s *Session) SetMode(m permission.Mode) error { return s.MainAgent().SetMode(m) }

// StopAgent stops one agent by id or name: a subagent or background
// agent is cancelled, a teammate is asked to shut down and then forced, a
// workflow run (its task id or run id) stops with its agents.
func (s *Session) StopAgent(id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), stopWait)
	defer cancel()
	if name, ok := s.teammateName(id); ok {
		return s.team.StopMember(ctx, name, "stopped by the user")
	}
	if t, ok := s.tasks.Get(id); ok && t.Kind() == task.KindWorkflow {
		if t.State().Status.Terminal() {
			return refused("workflow run %s is not running", id)
		}
		_, err := s.tasks.Stop(ctx, t.ID())
		return err
	}
	a, err := s.lookup(id)
	if err != nil {
		return err
	}
	if a == s.MainAgent() {
		return refused("%s is the session's own agent; Interrupt its turn or Close the session", id)
	}
	t := a.Task()
	if t == nil || t.State().Status.Terminal() {
		return refused("agent %s is not running", id)
	}
	_, err = s.tasks.Stop(ctx, t.ID())
	return err
}

// Background moves a running synchronous subagent to the background.
func (s *Session) Background(id string) error {
	a, err := s.lookup(id)
	if err != nil {
		return err
	}
	t := a.Task()
	if t == nil {
		return refused("agent %s is not a running subagent", id)
	}
	return s.tasks.Background(t.ID())
}

// Message sends text to one agent as the user: a teammate (by name or id)
// in its mailbox, a subagent or background agent at its next step (one
// that has finished is resumed with it). toLead reports that id names the
// lead, whose input is Send's.
func (s *Session) Message(id, text string) (toLead bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), stopWait)
	defer cancel()
	if name, ok := s.teammateName(id); ok {
		return false, s.team.Message(ctx, name, text)
	}
	a, err := s.lookup(id)
	if err != nil {
		return false, err
	}
	if a == s.lead {
		return true, nil
	}
	_, err = s.rt.Deliver(ctx, a.ID(), llm.Text("A message from the user:\n"+text))
	if errors.Is(err, crew.ErrNoAgent) {
		return false, fmt.Errorf("%w %q", ErrNoAgent, id)
	}
	return false, err
}

// Engine is the session's own agent's conversation (nil before it
// started).
func (s *Session) Engine() *engine.Conversation { return s.MainAgent().Engine() }

// ClearLead forgets the lead's conversation (package cohort's Clear), if
// it has started; then the next prompt opens a new one, so *opening (the
// SessionStart source of the next prompt) becomes "clear".
func (s *Session) ClearLead(opening *string) error {
	if eng := s.Engine(); eng != nil {
		if err := eng.Clear(); err != nil {
			return err
		}
	}
	*opening = hook.SourceClear
	return nil
}

// Compact summarises the lead's older turns: at once when no turn runs,
// else before the lead's next model request.
func (s *Session) Compact(ctx context.Context, running bool) error {
	eng := s.Engine()
	if eng == nil {
		return errors.New("cohort: Compact: the conversation has not started")
	}
	if running {
		eng.RequestCompact()
		return nil
	}
	return eng.Compact(ctx)
}

// lookup finds an agent by id, else by name.
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

// EndSession fires the SessionEnd hooks once, with a deadline of their
// own: the run's context may be cancelled already (Ctrl-C).
func (s *Session) EndSession() {
	s.ended.Do(func() {
		if s.lead == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s.hookMessages(s.hookScope(s.lead).SessionEnd(ctx, hook.EndOther))
	})
}

// StopAutoDream lets no dream start from now on; one running is a task.
func (s *Session) StopAutoDream() {
	if s.mem.auto != nil {
		s.mem.auto.Close()
	}
}

// Crew is the crew that builds and runs the session's agents.
func (s *Session) Crew() *crew.Crew { return s.rt }

// Tasks is the session's task registry.
func (s *Session) Tasks() *task.Registry { return s.tasks }

// wait waits for t to end; when ctx ends first, it stops t and waits for
// that.
func (s *Session) wait(ctx context.Context, t *task.Task) task.State {
	select {
	case <-t.Done():
	case <-ctx.Done():
		stop, cancel := context.WithTimeout(context.Background(), stopWait)
		defer cancel()
		_, _ = s.tasks.Stop(stop, t.ID())
		<-t.Done()
	}
	return t.State()
}

// ShellOutput is the end of a background shell task's output and the
// size of the whole (task.Registry.ShellOutput).
func (s *Session) ShellOutput(id string) ([]byte, int64, error) {
	if s.tasks == nil {
		return nil, 0, refused("the session has no tasks")
	}
	return s.tasks.ShellOutput(id)
}
