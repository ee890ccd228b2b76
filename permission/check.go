package permission

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// Request is one tool call to decide.
type Request struct {
	Tool  string
	Input json.RawMessage
	// ReadOnly comes from the tool's traits. For Bash the checker analyses
	// the command itself and ignores it.
	ReadOnly bool
	// Cwd is the calling agent's working directory ("" for the session's).
	Cwd       string
	AgentID   string
	ToolUseID string
	// Paths lists files a tool outside the built-in table touches (see
	// Pather); built-in file tools are read by PathsOf.
	Paths []string
	// Subject is what "Tool(specifier)" rules of a tool outside the built-in
	// table compare against (exact match).
	Subject string
}

// Decision is the checker's answer.
type Decision struct {
	Behavior Behavior
	// Reason explains the decision in words the model (and the user) read.
	Reason string
	// Rule is the rule that decided, nil when the mode did.
	Rule *Rule
	// Source names where Rule came from.
	Source string
	// Bubble marks an ask in bubble mode: the caller routes it to the
	// parent agent's approver.
	Bubble bool
	// ReadOnly marks an allow that rests only on the analysis judging a
	// Bash command read-only: no rule, mode or person approved a write
	// (bypassPermissions approves every command, so there it is never
	// set). The sandbox runs such a command in its read-only profile, so
	// that a wrong verdict cannot write.
	ReadOnly bool
	// FailClosed marks an ask that exists because something could not be
	// checked (a deny rule against a command it cannot see into, a broken
	// settings file), not because of the mode. Automatic approvals such as
	// a hook's allow must not answer it; a person may.
	FailClosed bool
	// Suggestions are updates that would allow this call next time (for
	// "always allow" answers and the headless hint).
	Suggestions []RuleUpdate
}

const planReason = "Cohort is in plan mode, where only read-only tools may run. Keep researching and planning; when the plan is ready, call ExitPlanMode to ask the user to approve it before making changes."

// planExempt tools keep their usual treatment in plan mode: they plan,
// ask, or spawn agents that inherit plan mode.
var planExempt = map[string]bool{"Agent": true, "EnterPlanMode": true, "ExitPlanMode": true, "AskUserQuestion": true, "TodoWrite": true,
	"SendMessage": true, "ListAgents": true, "TaskGet": true, "TaskList": true, "TaskOutput": true}

// coordination are the tools that only steer the agent's own team and tasks:
// they touch no file and run nothing, so they need no approval.
var coordination = map[string]bool{"Agent": true, "EnterPlanMode": true, "SendMessage": true, "ListAgents": true,
	"TaskOutput": true, "TaskStop": true, "TeamCreate": true, "TeamDelete": true,
	"TaskCreate": true, "TaskGet": true, "TaskUpdate": true, "TaskList": true}

// evaluation holds one Check's state.
type evaluation struct {
	sh    *shared
	rules []*Rule
	dirs  []workDir
	mode  Mode
	req   Request
	cwd   string
	bases map[string]string // resolved forms of rule roots
	bash  *analysis
	own   *ownReads // the checker's AllowOwnRead files
}

// Check decides a call: deny rules, then ask rules, then allow rules, then
// the mode's default. It never returns allow for something it could not
// understand. Safe for concurrent use; ctx only cancels (a cancelled
// context is a deny).
func (c *Checker) Check(ctx context.Context, req Request) Decision {
	return c.checkIn(ctx, req, c.Mode())
}

// checkIn is Check as if the checker were in mode.
func (c *Checker) checkIn(ctx context.Context, req Request, mode Mode) Decision {
	if err := ctx.Err(); err != nil {
		return Decision{Behavior: Deny, Reason: "The permission check was cancelled: " + err.Error()}
	}
	e := &evaluation{sh: c.sh, rules: c.sh.snapshot(), dirs: c.sh.dirSnapshot(), mode: mode, req: req, cwd: c.sh.cwd,
		bases: map[string]string{}, own: &c.own}
	if req.Cwd != "" {
		if !filepath.IsAbs(req.Cwd) {
			return Decision{Behavior: Deny, Reason: fmt.Sprintf("Permission check failed: the working directory %q is not absolute.", req.Cwd)}
		}
		e.cwd = filepath.Clean(req.Cwd)
	}
	var d Decision
	switch {
	case req.Tool == "Bash":
		d = e.checkBash()
	case pathTool(req.Tool) || len(req.Paths) > 0:
		d = e.checkFiles()
	default:
		d = e.checkOther()
	}
	return e.finish(d)
}

// DeniedRead reports whether Read deny rules cover path (relative to cwd,
// "" for the session's), so that tools returning many files (Glob, Grep,
// LS) can leave denied ones out of their results, and file tools can
// refuse a denied file below the permission check. With any Read deny
// rule in force, a path that cannot be resolved (ProcessPath, a link
// loop) counts as denied. It implements tool.ReadPolicy. Safe for
// concurrent use.
func (c *Checker) DeniedRead(cwd, path string) bool {
	e := &evaluation{sh: c.sh, rules: c.sh.snapshot(), cwd: c.sh.cwd, bases: map[string]string{}}
	if cwd != "" {
		e.cwd = cwd
	}
	if c.secretRead(e.cwd, path) {
		return true
	}
	rules := e.rulesFor(Deny, func(r *Rule) bool { return r.coversTool("Read") })
	if len(rules) == 0 {
		return false
	}
	if c.hiddenRead(e.cwd, path) {
		return true
	}
	f, err := formsOf(e.cwd, path)
	if err != nil {
		return true
	}
	for _, r := range rules {
		if e.pathMatch(r, f, true) {
			return true
		}
	}
	return false
}

// finish applies what holds for every tool: broken settings allow nothing,
// dontAsk turns asks into denies, bubble marks them.
func (e *evaluation) finish(d Decision) Decision {
	if d.Behavior == Allow && len(e.sh.degraded) > 0 {
		d = Decision{Behavior: Ask, FailClosed: true, Reason: fmt.Sprintf("%s needs approval because the settings file %s could not be read completely, so some deny rules may be missing. Fix the file to restore automatic approvals.",
			e.req.Tool, strings.Join(e.sh.degraded, ", "))}
	}
	if d.Rule != nil {
		d.Source = d.Rule.Source
	}
	if d.Behavior != Ask {
		return d
	}
	switch e.mode {
	case ModeDontAsk:
		d.Behavior = Deny
		d.Reason += " This session is in dontAsk mode, which denies anything that would need approval."
		return d
	case ModeBubble:
		d.Bubble = true
	}
	d.Suggestions = e.suggest()
	return d
}

func (e *evaluation) rulesFor(b Behavior, covers func(*Rule) bool) []*Rule {
	var out []*Rule
	for _, r := range e.rules {
		if r.Behavior == b && covers(r) {
			out = append(out, r)
		}
	}
	return out
}

func (e *evaluation) covers(r *Rule) bool { return r.coversTool(e.req.Tool) }

func deniedBy(tool string, r *Rule, what string) Decision {
	reason := fmt.Sprintf("Permission to use %s was denied by the rule %s.", tool, r.where())
	if r.Invalid != "" {
		reason = fmt.Sprintf("Permission to use %s was denied because the deny rule %s is invalid; until it is fixed every %s call is denied.", tool, r.where(), tool)
	}
	if what != "" {
		reason = fmt.Sprintf("Permission to %s was denied by the rule %s.", what, r.where())
	}
	return Decision{Behavior: Deny, Reason: reason, Rule: r}
}

func askedBy(tool string, r *Rule) Decision {
	return Decision{Behavior: Ask, Rule: r, Reason: fmt.Sprintf("%s needs approval because of the ask rule %s.", tool, r.where())}
}

func allowedBy(r *Rule) Decision {
	return Decision{Behavior: Allow, Rule: r, Reason: "allowed by the rule " + r.where()}
}

// checkOther handles tools without paths or commands: WebFetch (by domain),
// Agent (by agent type), MCP tools (by name) and the rest (by Subject).
func (e *evaluation) checkOther() Decision {
	tool := e.req.Tool
	subject, known := e.req.Subject, e.req.Subject != ""
	switch tool {
	case "WebFetch":
		host, err := hostOf(e.req.Input)
		subject, known = host, err == nil
	case "Agent":
		subject, known = agentTypeOf(e.req.Input), true
	}
	match := func(r *Rule, broad bool) bool {
		switch {
		case r.Specifier == "":
			return true
		case !known:
			return broad // a specific rule cannot be ruled out
		case r.domain != "":
			return domainMatch(r.domain, subject)
		}
		return r.Specifier == subject
	}
	for _, r := range e.rulesFor(Deny, e.covers) {
		if match(r, true) {
			return deniedBy(tool, r, "")
		}
	}
	for _, r := range e.rulesFor(Ask, e.covers) {
		if match(r, true) {
			return askedBy(tool, r)
		}
	}
	if e.mode != ModePlan || e.req.ReadOnly || planExempt[tool] {
		for _, r := range e.rulesFor(Allow, e.covers) {
			if match(r, false) {
				return allowedBy(r)
			}
		}
	}
	return e.otherDefault(tool, subject)
}

// otherDefault is the mode's answer for tools without paths or commands.
func (e *evaluation) otherDefault(tool, subject string) Decision {
	ask := Decision{Behavior: Ask, Reason: tool + " needs the user's approval."}
	switch {
	case tool == "SendMessage" && !e.toSessionOrTeam():
		// uds:<path> connects to a Unix socket: only a Cohort session's is
		// a message's place; any other (tmux, docker, …) asks, in every
		// mode: the sandbox keeps commands off such sockets, and
		// bypassPermissions skips prompts, never the sandbox's bounds.
		ask.Reason = fmt.Sprintf("Sending a message to %s needs the user's approval in every mode: it is not the socket of a Cohort session (those are in %s).",
			sendTarget(e.req.Input), filepath.Join(e.sh.cohortHome, "sessions"))
		return ask
	case coordination[tool]:
		// A subagent's own calls are checked one by one; the others steer
		// the agent's own team and tasks.
		return Decision{Behavior: Allow, Reason: tool + " needs no approval"}
	case e.mode == ModeBypassPermissions:
		return Decision{Behavior: Allow, Reason: "bypassPermissions mode"}
	case tool == "ExitPlanMode":
		ask.Reason = "Leaving plan mode needs the user's approval of the plan."
		return ask
	case tool == "WebFetch":
		if subject != "" {
			ask.Reason = fmt.Sprintf("Fetching from %s needs the user's approval.", subject)
		}
		return ask
	case tool == "WebSearch":
		// The query leaves the machine, as a fetch's URL does.
		ask.Reason = "Searching the web needs the user's approval."
		return ask
	case strings.HasPrefix(tool, "mcp__"):
		// Read-only hints from MCP servers are not trusted.
		if e.mode == ModePlan && !e.req.ReadOnly {
			return Decision{Behavior: Deny, Reason: planReason}
		}
		return ask
	case e.req.ReadOnly:
		return Decision{Behavior: Allow, Reason: "read-only tool"}
	case e.mode == ModePlan && !planExempt[tool]:
		return Decision{Behavior: Deny, Reason: planReason}
	}
	return ask
}

// sendTarget is a SendMessage call's "to".
func sendTarget(input json.RawMessage) string {
	var in struct {
		To string `json:"to"`
	}
	_ = json.Unmarshal(input, &in)
	return in.To
}

// toSessionOrTeam reports whether a SendMessage call stays among agents: a
// teammate or named agent, or uds:<path> naming the socket of a Cohort
// session (SessionSocket).
func (e *evaluation) toSessionOrTeam() bool {
	path, ok := strings.CutPrefix(sendTarget(e.req.Input), "uds:")
	if !ok {
		return true
	}
	_, ok = e.sh.sessionSocket(path)
	return ok
}

// SessionSocket reports whether path (a SendMessage uds: address) is the
// socket of a Cohort session, $COHORT_HOME/sessions/*.sock with links
// resolved, and returns it resolved: the path to connect to, so that a
// link changed after this check leads nowhere else. SendMessage asks for
// it below the permission check. Safe for concurrent use.
func (c *Checker) SessionSocket(path string) (string, bool) { return c.sh.sessionSocket(path) }

func (sh *shared) sessionSocket(path string) (string, bool) {
	if !filepath.IsAbs(path) || sh.cohortHome == "" || !strings.HasSuffix(path, ".sock") {
		return "", false
	}
	resolve := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return filepath.Clean(p)
	}
	sessions := resolve(filepath.Join(sh.cohortHome, "sessions"))
	resolved := resolve(path)
	if filepath.Dir(resolved) != sessions {
		return "", false
	}
	return resolved, true
}
