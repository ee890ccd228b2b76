package engine

import (
	"fmt"

	"github.com/cohort-dev/cohort/llm"
)

// Mark is a place in a conversation: its length, in the version of its
// history that compaction, fitting, clearing and rewinding each replace.
type Mark struct{ rewrites, length int }

// Rewrites counts the history's rewrites in this process before the mark.
func (m Mark) Rewrites() int { return m.rewrites }

// Messages is the history's length at the mark.
func (m Mark) Messages() int { return m.length }

// Mark returns where the conversation is now (before a user turn, what a
// rewind goes back to).
func (a *Conversation) Mark() Mark {
	a.mu.Lock()
	defer a.mu.Unlock()
	return Mark{rewrites: a.rewrites, length: len(a.history)}
}

// RewindTo drops what the conversation gained after m, so that the next
// request repeats the bytes of the history as it was at m (the cache is
// read). The transcript records the rewrite, so a resume starts from it.
// A history rewritten since m (compacted, fitted, cleared) cannot go back
// to it: that is an error and nothing changes.
func (a *Conversation) RewindTo(m Mark) error {
	a.mu.Lock()
	if m.rewrites != a.rewrites || m.length > len(a.history) {
		a.mu.Unlock()
		return fmt.Errorf("the conversation was compacted, cleared or rewound since that turn; it cannot go back to it")
	}
	a.history = a.history[:m.length:m.length]
	a.lastReq, a.lastSeen, a.lastUsage = nil, 0, llm.Usage{}
	kept := llm.CloneMessages(a.history)
	a.mu.Unlock()
	return a.recordRewrite(fmt.Sprintf("the conversation was rewound to its first %d messages", m.length), kept, "")
}

// Restore replaces the history with msgs, the conversation as it was at
// an earlier place that this process no longer holds (the transcript
// does), and records the rewrite; note says why.
func (a *Conversation) Restore(msgs []llm.Message, note string) error {
	a.mu.Lock()
	a.history = llm.CloneMessages(msgs)
	a.lastReq, a.lastSeen, a.lastUsage = nil, 0, llm.Usage{}
	kept := llm.CloneMessages(a.history)
	a.mu.Unlock()
	return a.recordRewrite(note, kept, "")
}
