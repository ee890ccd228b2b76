package teammate

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/sessionsock"
	"github.com/cohort-dev/cohort/team"
	"github.com/cohort-dev/cohort/tool"
)

// SendInput is SendMessage's input: Claude Code's {to, message, summary},
// message being text or a typed protocol message (Body), plus the flat
// fields of the older shape (type, request_id, approve beside a text
// message), kept as an alias. New fields go here, each optional.
type SendInput struct {
	To      string `json:"to"`
	Message Body   `json:"message"`
	Summary string `json:"summary,omitempty"`
	// Type, RequestID and Approve are the flat alias of a typed message:
	// type "message" (default), "shutdown_request", "shutdown_response" or
	// "plan_approval_response", the message text being its reason or
	// feedback.
	Type      string `json:"type,omitempty"`
	RequestID string `json:"request_id,omitempty"`
	Approve   *bool  `json:"approve,omitempty"`
	// Options are Claude Code's delivery options for a message to another
	// session (uds:); null is no options.
	Options *SendOptions `json:"options,omitempty"`
	// NotifyWhenIdle asks another session (uds:) for one notice when it
	// next goes idle or exits; the main conversation only.
	NotifyWhenIdle bool `json:"notify_when_idle,omitempty"`
}

// SendOptions is SendMessage's options object: priority now, next or
// later (sessionsock says what each does), and session_name, a session's
// exact title (sessionName says what it does).
type SendOptions struct {
	Priority    string `json:"priority,omitempty"`
	SessionName string `json:"session_name,omitempty"`
}

// normalize folds a typed message into the flat fields; it returns what is
// wrong with a message that cannot be read.
func (in *SendInput) normalize() string {
	if in.Message.bad != "" {
		return in.Message.bad
	}
	if p := in.Message.Typed; p != nil {
		if p.Type == "" {
			return "the message object has no type"
		}
		in.Type, in.RequestID, in.Approve = p.Type, p.RequestID, p.Approve
		in.Message.Text = p.Reason
		if p.Feedback != "" {
			in.Message.Text = p.Feedback
		}
	}
	return ""
}

// sendTool is SendMessage. It routes by address: "*" (the whole team), a
// running agent's name (its queue), a team member (its mailbox),
// "uds:<path>" (another session's socket), "bridge:<session>" (another
// session through NATS, LeadConfig.Bridge).
type sendTool struct {
	l  *Lead
	rt *crew.Crew
}

// sendSchema is SendMessage's input schema, built when the tool is made.
func sendSchema() tool.Schema {
	return tool.Object(
		tool.Required("to", tool.String("Recipient: an agent's or member's name, \"team-lead\", \"*\" (broadcast), or another session's name, id or \"uds:<path>\" (as ListAgents prints them).").WithMinLength(1)),
		tool.Required("message", tool.Schema{Description: "The message: text, or a protocol message as an object with a type (shutdown_request, shutdown_response, plan_approval_response) and its fields."}),
		tool.Optional("summary", tool.String("A 5-10 word preview, shown in the recipient's list.")),
		tool.Optional("type", tool.Enum("Older form of a protocol message's type, beside a text message (default message).", "message", "shutdown_request", "shutdown_response", "plan_approval_response")),
		tool.Optional("request_id", tool.String("For a protocol answer: the id of the request it answers.")),
		tool.Optional("approve", tool.Boolean("For a protocol answer: approve (true) or reject (false).")),
		tool.Optional("options", sendOptionsSchema()),
		tool.Optional("notify_when_idle", tool.Boolean("For another session (its name, id or uds:), from the main conversation only: be told once, by a notice, when it next finishes its turn with nothing waiting, or exits. A message is delivered too; leave it empty to only subscribe.")),
	)
}

// sendOptionsSchema is the options object: only for another session.
func sendOptionsSchema() tool.Schema {
	s := tool.Object(
		tool.Optional("priority", tool.Enum("When the other session takes the message: now (ahead of what waits there, at its next step), next (after what waits, at its next step; the default), later (once the turn it is running ends).", "now", "next", "later")),
		tool.Optional("session_name", tool.String(`A session's exact title. With to "@find", nothing is sent: the sessions with that title are listed. With a session's id as to, the message goes only if that is its title now.`)))
	s.Description = `Only for a message to another session (its id, name or uds:), or with to "@find".`
	return s
}

// newSendTool is SendMessage. A message changes nothing on disk but must
// keep its order, so calls are not concurrency-safe.
func newSendTool(l *Lead, rt *crew.Crew) tool.Tool {
	t := &sendTool{l: l, rt: rt}
	// Claude Code 2.1.332 reads a null summary or options as absent; its
	// notify_when_idle refuses null, as Cohort's other fields do.
	return tool.New(tool.Spec[SendInput]{Name: "SendMessage", Description: sendDescription, Input: sendSchema(), Run: t.run,
		NullAsAbsent: []string{"summary", "options"}})
}

const sendDescription = `Sends a message to another agent: a teammate, the team lead, a named agent running in this session, or another Cohort session. Your plain replies are not seen by other agents; this tool is how you reach them.

- to: a teammate's or running agent's name ("alice"), "team-lead" for the lead, "*" for every member of your team except you; for another Cohort session on this machine, its name or id or "uds:<socket path>" (ListAgents prints each agent's and session's address).
- message: the text. Be specific: what you did, what you found, what you need. Include paths and ids.
- Messages arrive at the recipient's next tool-result boundary, or wake it when it is idle.
- options and notify_when_idle are for another session only; to learn when it goes idle, use notify_when_idle rather than polling ListAgents. To find a session by its title, send to "@find" with options.session_name; nothing is sent.
- Protocol messages are objects in message: the lead asks a teammate to stop with {"type": "shutdown_request", "reason": "…"} (an idle teammate approves by itself; you are told the answer); a teammate answers with {"type": "shutdown_response", "request_id": "…", "approve": true} (or false with a "reason"); the lead answers a teammate's plan with {"type": "plan_approval_response", "request_id": "…", "approve": true or false, "feedback": "…"}.`

// run sends one message.
func (t *sendTool) run(ctx context.Context, env *tool.Env, in SendInput) (tool.Result, error) {
	from := t.l.senderName(env)
	if bad := in.normalize(); bad != "" {
		return tool.Errorf("SendMessage: %s. Send text, or one of: %s; %s; %s.", bad, shutdownRequestShape, shutdownResponseShape, planResponseShape), nil
	}
	res, to, done := t.sessionName(ctx, in)
	if done {
		return res, nil
	}
	asked := to
	to, err := t.sessionAddress(ctx, t.l.teamFor(env), to)
	if err != nil {
		return tool.Errorf("SendMessage: %v", err), nil
	}
	in.To = to
	if in.NotifyWhenIdle && !strings.HasPrefix(in.To, "uds:") {
		return tool.Errorf("SendMessage: notify_when_idle is for another session (its name, id or uds:<path>), and %q names no session on this machine; you hear from this session's own agents without asking.%s Send it again to a session listed, or without notify_when_idle.", in.To, t.l.knownSessions(ctx)), nil
	}
	if in.NotifyWhenIdle && (!t.l.isLead(env) || env.Caller.Depth != 0) {
		return tool.Errorf("SendMessage: notify_when_idle is for the main conversation only; send the message without it and report to your parent."), nil
	}
	if in.Options != nil && in.Options.Priority != "" && !strings.HasPrefix(in.To, "uds:") {
		return tool.Errorf("SendMessage: options.priority is for a message to another session (uds:<path>); a message to %q arrives at its next step. Send it again without options.", in.To), nil
	}
	switch {
	case strings.HasPrefix(in.To, "uds:"):
		return t.sendUDS(ctx, env, from, asked, in)
	case strings.HasPrefix(in.To, "bridge:"):
		return t.sendBridge(ctx, from, in)
	}
	msg, bad := t.l.compose(env, from, in)
	if bad != nil {
		return *bad, nil
	}
	if in.To == "*" {
		return t.l.broadcast(ctx, env, msg)
	}
	if msg.Type == mailbox.TypeText {
		note, err := t.rt.Deliver(ctx, in.To, mailbox.Block(msg))
		switch {
		case err == nil:
			return tool.Text(note), nil
		case !errors.Is(err, crew.ErrNoAgent):
			return tool.Errorf("Could not deliver to %s: %v", in.To, err), nil
		}
	}
	return t.l.toMember(ctx, env, msg)
}

// senderName is how env's agent signs messages.
func (l *Lead) senderName(env *tool.Env) string {
	switch {
	case l.isLead(env):
		return team.LeadName
	case env.Caller.Name != "":
		return env.Caller.Name
	}
	return env.Caller.ID
}

// compose builds the mailbox message for in, refusing what the sender may
// not send.
func (l *Lead) compose(env *tool.Env, from string, in SendInput) (mailbox.Message, *tool.Result) {
	refuse := func(format string, args ...any) (mailbox.Message, *tool.Result) {
		r := tool.Errorf(format, args...)
		return mailbox.Message{}, &r
	}
	lead := from == team.LeadName
	var p mailbox.Payload
	switch in.Type {
	case "", "message":
		return mailbox.Message{From: from, To: in.To, Text: in.Message.Text, Summary: in.Summary, Color: l.colorOf(env, from)}, nil
	case "shutdown_request":
		if !lead {
			return refuse("Only the team lead asks teammates to shut down.")
		}
		p = mailbox.ShutdownRequest{RequestID: mailbox.NewID(l.cfg.Now()), Reason: in.Message.Text}
	case "plan_approval_response":
		if !lead {
			return refuse("Only the team lead answers plan approval requests.")
		}
		if in.RequestID == "" || in.Approve == nil {
			return refuse("A plan_approval_response needs request_id and approve; send message: %s.", planResponseShape)
		}
		p = mailbox.PlanApprovalResponse{RequestID: in.RequestID, Approve: *in.Approve, Feedback: in.Message.Text}
	case "shutdown_response":
		if lead {
			return refuse("The lead does not answer shutdown requests; teammates do.")
		}
		if in.RequestID == "" || in.Approve == nil {
			return refuse("A shutdown_response needs request_id and approve; send message: %s.", shutdownResponseShape)
		}
		p = mailbox.ShutdownResponse{RequestID: in.RequestID, Approve: *in.Approve, Reason: in.Message.Text}
	default:
		return refuse("Unknown message type %q: send text, or one of: %s; %s; %s. (Permission answers cannot be sent as messages.)", in.Type, shutdownRequestShape, shutdownResponseShape, planResponseShape)
	}
	m, err := mailbox.NewMessage(from, in.To, p)
	if err != nil {
		return refuse("Could not encode the message: %v", err)
	}
	m.Color = l.colorOf(env, from)
	return m, nil
}

func (l *Lead) colorOf(env *tool.Env, name string) string {
	teamName := l.teamFor(env)
	if teamName == "" || name == team.LeadName {
		return ""
	}
	m, err := l.cfg.Store.Member(teamName, name)
	if err != nil {
		return ""
	}
	return m.Color
}

// teamFor is the team the calling agent belongs to or leads.
func (l *Lead) teamFor(env *tool.Env) string {
	name, _ := l.Membership(env)
	return name
}

func (l *Lead) toMember(ctx context.Context, env *tool.Env, msg mailbox.Message) (tool.Result, error) {
	teamName := l.teamFor(env)
	if teamName == "" {
		return tool.Errorf("No agent named %q is running, and you are not in a team. Running agents can be addressed by the name they were started with.%s", msg.To, l.knownSessions(ctx)), nil
	}
	mbox, err := l.cfg.Store.Mailbox(teamName)
	if err != nil {
		return tool.Errorf("Team %q is not available: %v", teamName, err), nil
	}
	if msg.To == msg.From {
		return tool.Errorf("You cannot send a message to yourself."), nil
	}
	if _, err := l.cfg.Store.Member(teamName, msg.To); err != nil {
		return tool.Errorf("No member named %q in team %q. Members: %s.%s", msg.To, teamName, l.memberList(teamName), l.knownSessions(ctx)), nil
	}
	if _, err := mbox.Append(ctx, msg); err != nil {
		if errors.Is(err, mailbox.ErrUnknownRecipient) {
			return tool.Errorf("No member named %q in team %q. Members: %s.", msg.To, teamName, l.memberList(teamName)), nil
		}
		return tool.Result{}, fmt.Errorf("teammate: send to %s: %w", msg.To, err)
	}
	l.emit(Event{Kind: EventMessage, Team: teamName, From: msg.From, To: msg.To, Text: msg.Text, Detail: string(msg.Type)})
	if msg.Type == mailbox.TypeShutdownRequest {
		return tool.Text(fmt.Sprintf("Shutdown request sent to %s. An idle teammate approves it and stops; a busy one declines. You will read the answer.", msg.To)), nil
	}
	return tool.Text(fmt.Sprintf("Message sent to %s.", msg.To)), nil
}

func (l *Lead) memberList(teamName string) string {
	ms, err := l.cfg.Store.ActiveMembers(teamName)
	if err != nil {
		return "(unknown)"
	}
	var names []string
	for _, m := range ms {
		names = append(names, m.Name)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func (l *Lead) broadcast(ctx context.Context, env *tool.Env, msg mailbox.Message) (tool.Result, error) {
	teamName := l.teamFor(env)
	if teamName == "" {
		return tool.Errorf("Broadcast (\"*\") needs a team; you are not in one."), nil
	}
	ms, err := l.cfg.Store.ActiveMembers(teamName)
	if err != nil {
		return tool.Errorf("Team %q is not available: %v", teamName, err), nil
	}
	mbox, err := l.cfg.Store.Mailbox(teamName)
	if err != nil {
		return tool.Errorf("Team %q is not available: %v", teamName, err), nil
	}
	var sent []string
	for _, m := range ms {
		if m.Name == msg.From {
			continue
		}
		one := msg
		one.To, one.ID = m.Name, ""
		if _, err := mbox.Append(ctx, one); err != nil {
			return tool.Result{}, fmt.Errorf("teammate: broadcast to %s: %w", m.Name, err)
		}
		sent = append(sent, m.Name)
	}
	l.emit(Event{Kind: EventMessage, Team: teamName, From: msg.From, To: "*", Text: msg.Text})
	if len(sent) == 0 {
		return tool.Text("Nobody else is in the team; the broadcast reached no one."), nil
	}
	return tool.Text(fmt.Sprintf("Message sent to %s.", strings.Join(sent, ", "))), nil
}

// sendUDS sends to a socket; asked is the to the model wrote (a session's
// name or id, resolved to in.To), named in the result beside the address
// the other session's replies and notices come from.
func (t *sendTool) sendUDS(ctx context.Context, env *tool.Env, from, asked string, in SendInput) (tool.Result, error) {
	path := strings.TrimPrefix(in.To, "uds:")
	// Below the permission check, which has the same rule: a socket that
	// is not a Cohort session's (tmux's, docker's) needs a person or an
	// allow rule, whatever the mode; a session's is reached by its
	// resolved path, so a link swapped after the check goes nowhere else.
	resolved, session := t.sessionSocket(path)
	if session {
		path = resolved
	} else if !env.Approved {
		return tool.Errorf("Cannot send to %s: it is not the socket of a Cohort session, and a message to any other socket needs a person's approval or an allow rule naming it (SendMessage(%s)).", in.To, in.To), nil
	}
	var d sessionsock.Delivery
	if in.Options != nil {
		d.Priority = in.Options.Priority
	}
	text := in.Message.Text
	if in.NotifyWhenIdle {
		if t.l.cfg.SessionsDir == "" {
			return tool.Errorf("SendMessage: this session has no socket of its own for the notice to reach; send the message without notify_when_idle."), nil
		}
		d.NotifyIdle = filepath.Join(t.l.cfg.SessionsDir, t.l.cfg.SessionID+".sock")
		if strings.TrimSpace(text) == "" {
			d.SubscribeOnly, text = true, "(asks to be told when this session is next idle)"
		}
	}
	if from == team.LeadName && t.l.cfg.SessionsDir != "" && t.l.cfg.SessionID != "" {
		// "team-lead" means nothing in another session (it has no such
		// agent, and its model wasted a turn answering it): sign with
		// this session's own address, which SendMessage accepts as to.
		from = "uds:" + filepath.Join(t.l.cfg.SessionsDir, t.l.cfg.SessionID+".sock")
	}
	withdraw := func() {}
	if in.NotifyWhenIdle && t.l.cfg.ExpectIdleNotice != nil {
		withdraw = t.l.cfg.ExpectIdleNotice(path)
	}
	id, err := sessionsock.SendWith(ctx, path, mailbox.Message{From: from, Text: text, Summary: in.Summary}, d)
	if err != nil {
		withdraw()
		return tool.Errorf("Could not deliver to %s: %v", in.To, err), nil
	}
	// The session as the model named it and as its replies and notices
	// will name it (from="uds:..."), and the id as the message's.
	where := "at uds:" + path
	if asked != "" && !strings.HasPrefix(asked, "uds:") {
		where = strconv.Quote(asked) + " " + where
	}
	if in.NotifyWhenIdle {
		return tool.Text(fmt.Sprintf("Sent to the session %s (message id %s). You will get one notice when it is next idle or exits; do not poll for it.", where, id)), nil
	}
	if !session {
		return tool.Text(fmt.Sprintf("Message delivered to the socket at %s (message id %s).", path, id)), nil
	}
	return tool.Text(fmt.Sprintf("Message delivered to the session %s (message id %s). It is queued for that session's lead (first held for the approval of the person there, if they did not start this session); do not send it again.", where, id)), nil
}

// sessionSocket resolves a uds: path that is a Cohort session's socket
// (permission.Checker.SessionSocket); without a checker none is.
func (t *sendTool) sessionSocket(path string) (string, bool) {
	if t.l.cfg.Checker == nil {
		return "", false
	}
	return t.l.cfg.Checker.SessionSocket(path)
}

// sendBridge sends to another session through NATS (LeadConfig.Bridge).
func (t *sendTool) sendBridge(ctx context.Context, from string, in SendInput) (tool.Result, error) {
	to := strings.TrimPrefix(in.To, "bridge:")
	if t.l.cfg.Bridge == nil {
		return tool.Errorf("Cannot send to %s: bridge: addresses reach sessions on other machines through a NATS server, and this session has none configured (remote.nats in the user settings). Use uds:<path> for a session on this machine.", in.To), nil
	}
	if strings.TrimSpace(to) == "" {
		return tool.Errorf("SendMessage: bridge: needs a session's name or id, as in bridge:build-box."), nil
	}
	label, id, err := t.l.cfg.Bridge(ctx, to, mailbox.Message{From: from, Text: in.Message.Text, Summary: in.Summary})
	if err != nil {
		return tool.Errorf("Could not deliver to %s: %v", in.To, err), nil
	}
	return tool.Text(fmt.Sprintf("Message delivered to session %s (id %s). It reaches that session's lead once a person there approves it; do not send it again.", label, id)), nil
}
