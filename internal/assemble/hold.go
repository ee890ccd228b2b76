package assemble

import (
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/task"
)

// holding keeps the messages from other sessions that wait for a person's
// decision, in arrival order: one worker asks about them one at a time
// through the session's prompter, so a person sees one question at a time
// and approved messages reach the lead in the order they came.
type holding struct {
	mu      sync.Mutex
	queue   []heldMessage
	running bool
	ctx     context.Context // cancelled at Close: the question is dropped
	stop    context.CancelFunc
	done    sync.WaitGroup
}

type heldMessage struct {
	msg      mailbox.Message
	item     task.Item
	priority string
	reason   string // what the person is told; empty: a session on this machine
}

// errNobodyToApprove refuses a message when nobody can decide on it.
var errNobodyToApprove = errors.New("this session takes a message from another session only once a person approves it, " +
	"and nobody can approve in it (it runs without a person to ask); the message was not delivered")

// openHolding prepares the holding and registers its end with the
// session's closers.
func (s *Session) openHolding() {
	s.held.ctx, s.held.stop = context.WithCancel(context.Background())
	s.closers = append(s.closers, func() {
		s.held.stop()
		s.held.done.Wait()
	})
}

// personCanDecide reports whether the session has someone to ask: a
// person or a program answering its permission prompts.
func (s *Session) personCanDecide() bool {
	return s.Permissions.Ask != nil || s.Permissions.PromptCommand != ""
}

// hold queues one message for a decision and starts the worker if none
// runs.
func (s *Session) hold(h heldMessage) {
	s.held.mu.Lock()
	defer s.held.mu.Unlock()
	s.held.queue = append(s.held.queue, h)
	if !s.held.running {
		s.held.running = true
		s.held.done.Add(1)
		go s.decideHeld()
	}
}

// decideHeld asks about each held message in turn until none waits.
func (s *Session) decideHeld() {
	defer s.held.done.Done()
	for {
		s.held.mu.Lock()
		if len(s.held.queue) == 0 {
			s.held.running = false
			s.held.mu.Unlock()
			return
		}
		h := s.held.queue[0]
		s.held.queue = s.held.queue[1:]
		s.held.mu.Unlock()
		s.decide(h)
	}
}

// decide asks whether h may reach the lead and hands it over if so; a
// refusal, or a question that cannot be asked, drops it.
func (s *Session) decide(h heldMessage) {
	if s.held.ctx.Err() != nil {
		return
	}
	input, _ := json.Marshal(map[string]string{"from": h.msg.From, "message": h.msg.Text})
	reason := firstNonEmpty(h.reason, "Another Cohort session on this machine sent this message to this session's lead; it reaches the lead only if you approve it.")
	d, err := s.prompter().Prompt(s.held.ctx, permission.PromptRequest{ToolName: "SendMessage", Input: input, Reason: reason})
	if err != nil || !d.Allow {
		s.logf("the message from %s was not delivered: %s", h.msg.From, firstNonEmpty(d.Message, errString(err), "refused"))
		return
	}
	_ = s.enqueueInbound(h.item, h.priority)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
