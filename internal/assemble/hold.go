package assemble

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"

	"github.com/cohort-dev/cohort/internal/holdgate"
	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/task"
)

// heldMessage is a message from another session waiting for a decision.
type heldMessage struct {
	msg      mailbox.Message
	item     task.Item
	priority string
	why      string // what sessionorigin found about the sender
	reason   string // what the person is told; empty: a session on this machine (with why)
	notify   string // the socket of a session that asked to hear of the lead's next idle
}

// errNobodyToApprove refuses a message when nobody can decide on it.
var errNobodyToApprove = errors.New("this session takes a message from a session the person did not start only once a person approves it, " +
	"and nobody can approve in it (it runs without a person to ask); the message was not delivered")

// sessionsDir is where the session sockets and their origin records live.
func (s *Session) sessionsDir() string {
	return filepath.Join(s.Process.Paths.CohortHome, "sessions")
}

// openHolding makes the gate that holds messages from senders the person
// did not start (package holdgate) and registers its end with the
// session's closers.
func (s *Session) openHolding() {
	s.held = holdgate.New(holdgate.Config[heldMessage]{
		Ask: s.askAboutMessage,
		Pass: func(h heldMessage) {
			if err := s.enqueueInbound(h.item, h.priority, h.notify); err != nil {
				s.logf("the message from %s was not delivered: %v", h.msg.From, err)
			}
		},
		Dropped: func(h heldMessage, why string) {
			s.logf("the message from %s was not delivered: %s", h.msg.From, why)
			if h.notify != "" {
				s.tellIdle(context.Background(), []string{h.notify}, "did not take your message ("+why+")", nil)
			}
		},
	})
	s.closers = append(s.closers, s.held.Close)
}

// personCanDecide reports whether the session has someone to ask: a
// person or a program answering its permission prompts.
func (s *Session) personCanDecide() bool {
	return s.Permissions.Ask != nil || s.Permissions.PromptCommand != ""
}

// askAboutMessage puts a held message to whoever answers the session's
// permission prompts, as a SendMessage prompt with the sender and text.
func (s *Session) askAboutMessage(ctx context.Context, h heldMessage) (bool, string, error) {
	input, _ := json.Marshal(map[string]string{"from": h.msg.From, "message": h.msg.Text})
	reason := h.reason
	if reason == "" {
		reason = "Another Cohort session on this machine sent this message to this session's lead, and you did not start it (" + h.why +
			"); it reaches the lead only if you approve it."
	}
	d, err := s.prompter().Prompt(ctx, permission.PromptRequest{ToolName: "SendMessage", Input: input, Reason: reason})
	if err != nil {
		return false, "", err
	}
	return d.Allow, d.Message, nil
}
