package teammate

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/team"
)

// leadDispatch handles a batch from the lead's inbox: chat, idle
// notifications and plan requests go to the lead model's queue; permission
// requests are decided here; shutdown answers go to whoever waits.
func (l *Lead) leadDispatch(r mailbox.Inbox, msgs []mailbox.Message) {
	ctx := l.ctx
	for _, m := range msgs {
		switch m.Type {
		case mailbox.TypePermissionRequest:
			l.wg.Add(1)
			go func() { defer l.wg.Done(); l.decide(ctx, m) }()
		case mailbox.TypeShutdownResponse:
			switch ok, asked := l.shutdown.deliver(requestID(m), m); {
			case ok:
			case asked != "":
				// Another member answered in the asked one's place: its
				// answer does not count; the lead waits for the real one.
				l.cfg.Logf("teammate: %s answered the shutdown request sent to %s (request %s): refused, not counted", m.From, asked, requestID(m))
				l.emit(Event{Kind: EventRefused, Team: l.teamName(), From: m.From, To: team.LeadName,
					Text: fmt.Sprintf("answered the shutdown request sent to %s; not counted", asked), Detail: string(m.Type)})
			default:
				// The lead model's own request (SendMessage): it reads
				// the answer, and an approved member leaves the team.
				l.shutdownAnswered(ctx, m)
			}
		case mailbox.TypeIdleNotification:
			l.idle(ctx, m)
		case mailbox.TypePlanApprovalRequest:
			l.emit(Event{Kind: EventPlan, Team: l.teamName(), From: m.From, To: team.LeadName, Text: "asks to approve a plan"})
			if l.cfg.PlanApprover != nil {
				l.wg.Add(1)
				go func() { defer l.wg.Done(); l.decidePlan(ctx, m) }()
			} else {
				l.enqueue(leadView(m))
			}
		default:
			l.emit(Event{Kind: EventDelivered, Team: l.teamName(), From: m.From, To: team.LeadName, Text: m.Text, Detail: string(m.Type)})
			l.heardFrom(m.From)
			l.enqueue(m)
		}
		if err := r.Ack(ctx, m.ID); err != nil && ctx.Err() == nil {
			l.cfg.Logf("teammate: acknowledge %s: %v", m.ID, err)
		}
	}
}

func (l *Lead) enqueue(m mailbox.Message) {
	l.enqueueLead(task.Item{Kind: task.ItemTeammateMessage, Text: mailbox.Render(m), From: m.From})
}

// decidePlan asks the PlanApprover about a teammate's plan and sends its
// verdict; when it cannot decide, the lead model gets the request.
func (l *Lead) decidePlan(ctx context.Context, m mailbox.Message) {
	p, err := m.Payload()
	req, ok := p.(mailbox.PlanApprovalRequest)
	if err != nil || !ok {
		l.cfg.Logf("teammate: unreadable plan request from %s: %v", m.From, err)
		return
	}
	approve, feedback, err := l.cfg.PlanApprover(ctx, m.From, req.Plan)
	if err != nil {
		if ctx.Err() == nil {
			l.enqueue(leadView(m))
		}
		return
	}
	if err := l.sendPayload(ctx, m.From, mailbox.PlanApprovalResponse{RequestID: req.RequestID, Approve: approve, Feedback: feedback}); err != nil {
		l.cfg.Logf("teammate: answer plan request of %s: %v", m.From, err)
	}
}

// leadView turns a structured message into the text the lead model reads.
func leadView(m mailbox.Message) mailbox.Message {
	p, err := m.Payload()
	if err != nil {
		return m
	}
	v := m
	v.Type = mailbox.TypeText
	switch p := p.(type) {
	case mailbox.IdleNotification:
		v.Summary = "idle"
		switch {
		case p.IdleReason == "failed":
			v.Text = fmt.Sprintf("%s stopped its turn with an error (%s) and is waiting for messages.", m.From, p.FailureReason)
		case p.Summary != "":
			v.Text = fmt.Sprintf("%s finished its turn and is waiting for messages. Its last words: %s", m.From, p.Summary)
		default:
			v.Text = fmt.Sprintf("%s finished its turn and is waiting for messages.", m.From)
		}
	case mailbox.ShutdownResponse:
		v.Summary = "shutdown response"
		if p.Approve {
			v.Text = fmt.Sprintf("%s approved your shutdown request and has stopped.", m.From)
		} else {
			v.Text = fmt.Sprintf("%s declined your shutdown request: %s", m.From, cmp.Or(p.Reason, "no reason given"))
		}
	case mailbox.PlanApprovalRequest:
		v.Summary = "plan approval request"
		v.Text = fmt.Sprintf("%s asks you to approve its plan before it changes anything. Answer with SendMessage{to: %q, type: \"plan_approval_response\", request_id: %q, approve: true or false, message: feedback}.\n\n%s",
			m.From, m.From, p.RequestID, p.Plan)
	}
	return v
}

// shutdownAnswered tells the lead model a teammate's answer to its
// shutdown request and, when approved, marks the member inactive.
func (l *Lead) shutdownAnswered(ctx context.Context, m mailbox.Message) {
	if p, err := m.Payload(); err == nil {
		if r, ok := p.(mailbox.ShutdownResponse); ok && r.Approve {
			if name := l.teamName(); name != "" {
				if _, err := l.cfg.Store.SetActive(ctx, name, m.From, false); err != nil {
					l.cfg.Logf("teammate: mark %s inactive: %v", m.From, err)
				}
			}
		}
	}
	l.enqueue(leadView(m))
}

// monitor watches the teammates started by other processes and reports the
// ones that die without shutting down.
func (l *Lead) monitor(ctx context.Context, teamName string) {
	t := time.NewTicker(l.cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			l.checkLiveness(ctx, teamName)
		}
	}
}

func (l *Lead) checkLiveness(ctx context.Context, teamName string) {
	l.mu.Lock()
	var procs []*handle
	for _, h := range l.members {
		if h.process != "" && !h.dead {
			procs = append(procs, h)
		}
	}
	l.mu.Unlock()
	for _, h := range procs {
		st, ok, _ := statusIn(l.cfg.Store, teamName, h.name)
		if ok && st.State == StateStopped {
			continue
		}
		reason := ""
		switch {
		case h.backend != nil && !h.backend.Alive(ctx, h.process):
			reason = "its process exited"
		case ok && st.PID > 0 && onThisHost(st.Host) && !processAlive(st.PID):
			reason = fmt.Sprintf("its process %d is gone", st.PID)
		case ok && l.cfg.Now().Sub(st.Heartbeat) > l.cfg.DeadAfter:
			reason = fmt.Sprintf("no heartbeat for %s", l.cfg.Now().Sub(st.Heartbeat).Round(time.Second))
		}
		if reason != "" {
			l.markDead(ctx, teamName, h, reason)
		}
	}
}

// releaseTasks gives back the open tasks of a member that died (its
// machine may have vanished mid-task), so another member can claim them,
// and says which for the lead's notification ("" for none).
func (l *Lead) releaseTasks(ctx context.Context, teamName, member string) string {
	list, err := l.cfg.Store.Tasks(teamName)
	if err != nil {
		return ""
	}
	released, err := list.Release(ctx, member)
	if err != nil {
		l.cfg.Logf("teammate: release the tasks of %s: %v", member, err)
		return ""
	}
	if len(released) == 0 {
		return ""
	}
	ids := make([]string, len(released))
	for i, t := range released {
		ids[i] = "#" + t.ID
	}
	return fmt.Sprintf(" Its unfinished tasks (%s) are unowned and pending again; any member may claim them.", strings.Join(ids, ", "))
}

// markDead records a teammate that stopped without shutting down and tells
// the lead.
func (l *Lead) markDead(ctx context.Context, teamName string, h *handle, reason string) {
	l.mu.Lock()
	if h.dead {
		l.mu.Unlock()
		return
	}
	h.dead = true
	lease := h.lease
	h.lease = nil
	jobs, job := h.backend.(*remoteJobs)
	l.mu.Unlock()
	l.finishLease(teamName, h.name, lease, nil)
	if job {
		// Its job is stopped (without waiting: a dead worker never
		// confirms), so the cancellation is stored and a worker that is
		// handed the job again after its ack wait does not run the dead
		// member a second time.
		if err := jobs.tasks.Kill(h.process); err != nil && !errors.Is(err, task.ErrNotRunning) {
			l.cfg.Logf("teammate: stop the job of %s: %v", h.name, err)
		}
	}
	released := l.releaseTasks(ctx, teamName, h.name)
	// Tell the lead before the member stops counting as busy: a lead that
	// sees no busy teammate and an empty queue ends its run, and would
	// never hear of the death.
	l.enqueueLead(task.Item{Kind: task.ItemTeammateMessage,
		Text: fmt.Sprintf("<team-notification member=%q state=\"dead\">Teammate %s is no longer running (%s). It will not answer messages; spawn a new teammate if its work must continue.%s</team-notification>", h.name, h.name, reason, released)})
	if _, err := l.cfg.Store.SetActive(ctx, teamName, h.name, false); err != nil {
		l.cfg.Logf("teammate: mark %s inactive: %v", h.name, err)
	}
	markStatusDead(l.cfg.Store, teamName, h.name, l.cfg.Now)
	l.changes.notify()
	l.emit(Event{Kind: EventDead, Team: teamName, From: h.name, Text: reason})
}

// Busy reports whether the team still has work in flight: a teammate that
// is starting or busy, or a message nobody has taken yet (in a teammate's
// inbox or the lead's). When nothing is, idle notices still held wake the
// lead if the quiet team needs it (settle): they are in its queue when
// Busy returns.
func (l *Lead) Busy() bool {
	if l.inFlight() {
		return true
	}
	l.settle(context.Background())
	return false
}

// inFlight is Busy's look at the members and the inboxes.
func (l *Lead) inFlight() bool {
	l.mu.Lock()
	name, mbox := l.team, l.mbox
	l.mu.Unlock()
	if name == "" {
		return false
	}
	members, err := l.cfg.Store.ActiveMembers(name)
	if err != nil {
		return false
	}
	for _, m := range members {
		if m.Name == team.LeadName {
			continue
		}
		st, ok, _ := statusIn(l.cfg.Store, name, m.Name)
		if !ok || st.State == StateStarting || st.State == StateBusy {
			return true
		}
		if st.State == StateIdle {
			if n, err := mbox.Pending(l.ctx, m.Name); err == nil && n > 0 {
				return true
			}
		}
	}
	n, err := mbox.Pending(l.ctx, team.LeadName)
	return err == nil && n > 0
}

// Shutdown asks every active teammate to stop, waits up to the shutdown
// timeout, then forces those that did not, and marks them all inactive.
func (l *Lead) Shutdown(ctx context.Context, reason string) {
	name := l.teamName()
	if name == "" {
		return
	}
	members, err := l.cfg.Store.ActiveMembers(name)
	if err != nil {
		l.cfg.Logf("teammate: shutdown: %v", err)
		return
	}
	var names []string
	for _, m := range members {
		if m.Name != team.LeadName {
			names = append(names, m.Name)
		}
	}
	if len(names) == 0 {
		return
	}
	l.emit(Event{Kind: EventShutdownRequested, Team: name, From: team.LeadName, To: strings.Join(names, ","), Text: reason})
	deadline := time.Now().Add(l.cfg.ShutdownTimeout)
	done := make(chan string, len(names))
	n := 0
	for _, member := range names {
		n++
		go func() { l.stopOne(ctx, name, member, reason, deadline); done <- member }()
	}
	for range n {
		<-done
	}
}

// stopOne asks one teammate to shut down until it agrees or the deadline
// passes, then forces it.
func (l *Lead) stopOne(ctx context.Context, teamName, member, reason string, deadline time.Time) {
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if l.askShutdown(ctx, member, reason, time.Until(deadline)) {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
	l.force(ctx, teamName, member)
	if _, err := l.cfg.Store.SetActive(ctx, teamName, member, false); err != nil {
		l.cfg.Logf("teammate: mark %s inactive: %v", member, err)
	}
}

// askShutdown sends one shutdown_request and reports whether it was approved.
func (l *Lead) askShutdown(ctx context.Context, member, reason string, wait time.Duration) bool {
	id := mailbox.NewID(l.cfg.Now())
	ch := l.shutdown.add(id, member)
	defer l.shutdown.remove(id)
	if err := l.sendPayload(ctx, member, mailbox.ShutdownRequest{RequestID: id, Reason: reason}); err != nil {
		return false
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case m := <-ch:
		p, _ := m.Payload()
		resp, ok := p.(mailbox.ShutdownResponse)
		return ok && resp.Approve
	case <-t.C:
	case <-ctx.Done():
	}
	return false
}

// force ends a teammate this process started (its goroutine or process),
// waiting for an approved one to exit on its own first.
func (l *Lead) force(ctx context.Context, teamName, member string) {
	l.mu.Lock()
	h := l.members[member]
	l.mu.Unlock()
	if h == nil {
		return
	}
	if h.inProc != nil {
		select {
		case <-h.inProc.Done():
		case <-time.After(time.Second):
			if _, err := l.cfg.Tasks.Stop(ctx, h.inProc.ID()); err != nil && !errors.Is(err, task.ErrNotRunning) {
				l.cfg.Logf("teammate: stop %s: %v", member, err)
			}
		}
		return
	}
	if h.process != "" && h.backend != nil {
		if rj, ok := h.backend.(*remoteJobs); ok {
			// Its work comes back when its job ends by itself: stopping
			// the job first would lose the branch.
			rj.await(ctx, h.process, remoteExitWait)
		}
		for i := 0; i < 20; i++ {
			if st, ok, _ := statusIn(l.cfg.Store, teamName, member); ok && st.State == StateStopped && onThisHost(st.Host) && !processAlive(st.PID) {
				break
			}
			if !h.backend.Alive(ctx, h.process) {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err := h.backend.Kill(ctx, h.process); err != nil {
			l.cfg.Logf("teammate: kill %s: %v", member, err)
		}
		l.mu.Lock()
		lease := h.lease
		h.lease = nil
		l.mu.Unlock()
		l.finishLease(teamName, member, lease, nil)
	}
}
