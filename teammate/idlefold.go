package teammate

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/tasklist"
	"github.com/cohort-dev/cohort/team"
)

// idleFold holds single teammates' idle notices until something the lead
// can act on wakes it (they join that wake), so that an idle notice never
// costs the lead a model turn of its own. The lead is woken for idleness
// only when the whole team is idle and it has something to do about it:
// tasks left open, or a teammate that went idle without a word to it since
// its last notice. Guarded by Lead.mu.
type idleFold struct {
	held []mailbox.Message
	// spoke records the teammates that messaged the lead since their last
	// idle notice: their idleness is explained by what they said.
	spoke map[string]bool
	// silent is set when a held notice came from a teammate that had not
	// spoken.
	silent bool
	// deciding serialises the decision to wake the lead for a quiet team,
	// which two paths make (idle and settle): one of them wakes it, once.
	deciding sync.Mutex
}

// heardFrom notes a message from a teammate to the lead.
func (l *Lead) heardFrom(name string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fold.spoke == nil {
		l.fold.spoke = map[string]bool{}
	}
	l.fold.spoke[name] = true
}

// idle handles a teammate's idle notification: a failed turn wakes the lead
// at once; otherwise the notice is held, and the lead is woken with what is
// held only when the whole team is idle and there is something to act on.
func (l *Lead) idle(ctx context.Context, m mailbox.Message) {
	if p, err := m.Payload(); err == nil {
		if n, ok := p.(mailbox.IdleNotification); ok && n.IdleReason == "failed" {
			l.enqueue(leadView(m))
			return
		}
	}
	l.fold.deciding.Lock()
	defer l.fold.deciding.Unlock()
	l.mu.Lock()
	l.fold.held = append(l.fold.held, m)
	if !l.fold.spoke[m.From] {
		l.fold.silent = true
	}
	delete(l.fold.spoke, m.From)
	silent, mbox := l.fold.silent, l.mbox
	l.mu.Unlock()
	// More in the lead's inbox than this notice (it is acknowledged after
	// this returns): a later notice decides, seeing this one held.
	if mbox != nil {
		if n, err := mbox.Pending(ctx, team.LeadName); err == nil && n > 1 {
			return
		}
	}
	if note := l.quietNote(ctx, m.From, silent); note != "" {
		l.enqueueLead(task.Item{Kind: task.ItemTeammateMessage, Text: note})
	}
}

// settle is the second look at held notices, made when the team has gone
// quiet (Busy finds nothing in flight). A teammate sends its idle notice
// before it publishes idle, so two teammates going idle together can each
// be seen busy by the other's notice, and neither notice wakes the lead;
// without this look the session would then end with the notices unread.
// It reports whether it woke the lead.
func (l *Lead) settle(ctx context.Context) bool {
	l.fold.deciding.Lock()
	defer l.fold.deciding.Unlock()
	l.mu.Lock()
	pending, silent := len(l.fold.held) > 0, l.fold.silent
	l.mu.Unlock()
	if !pending {
		return false
	}
	note := l.quietNote(ctx, "", silent)
	if note == "" {
		return false
	}
	l.enqueueLead(task.Item{Kind: task.ItemTeammateMessage, Text: note})
	return true
}

// takeHeld returns the held idle notices as items for the lead's queue and
// forgets them.
func (l *Lead) takeHeld() []task.Item {
	l.mu.Lock()
	held := l.fold.held
	l.fold.held, l.fold.silent = nil, false
	l.mu.Unlock()
	items := make([]task.Item, len(held))
	for i, m := range held {
		items[i] = task.Item{Kind: task.ItemTeammateMessage, Text: mailbox.Render(leadView(m)), From: m.From}
	}
	return items
}

// quietNote is the line that wakes the lead once every teammate is idle
// (idler has just said it is): tasks of the shared list left open, or,
// when a teammate went idle without a word to the lead, the plain fact.
// Empty when some teammate still works or there is nothing to act on.
func (l *Lead) quietNote(ctx context.Context, idler string, silent bool) string {
	name := l.teamName()
	if name == "" {
		return ""
	}
	members, err := l.cfg.Store.ActiveMembers(name)
	if err != nil {
		return ""
	}
	for _, m := range members {
		if m.Name == team.LeadName || m.Name == idler {
			continue
		}
		if st, ok, _ := statusIn(l.cfg.Store, name, m.Name); !ok || st.State == StateStarting || st.State == StateBusy {
			return ""
		}
	}
	var open []string
	if list, err := l.cfg.Store.Tasks(name); err == nil {
		tasks, _ := list.List(ctx)
		for _, t := range tasks {
			if t.Status != tasklist.StatusCompleted {
				open = append(open, fmt.Sprintf("#%s (%s)", t.ID, t.Status))
			}
		}
	}
	switch {
	case len(open) > 0:
		return fmt.Sprintf(`<team-notification state="idle">Every teammate is idle, and tasks %s of the shared list are not completed. Assign them (TaskUpdate owner, then SendMessage), or do them yourself.</team-notification>`, strings.Join(open, ", "))
	case silent:
		return `<team-notification state="idle">Every teammate is idle, waiting for messages.</team-notification>`
	}
	return ""
}
