package hook

import (
	"regexp"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/internal/lazyre"
	"github.com/cohort-dev/cohort/internal/spelling"
)

// Event names a point in an agent's life where hooks fire. The names are
// Claude Code's and appear as keys of the settings "hooks" object and as
// hook_event_name in the input.
type Event string

// The events Cohort fires.
const (
	PreToolUse         Event = "PreToolUse"
	PostToolUse        Event = "PostToolUse"
	PostToolUseFailure Event = "PostToolUseFailure"
	UserPromptSubmit   Event = "UserPromptSubmit"
	Stop               Event = "Stop"
	SubagentStart      Event = "SubagentStart"
	SubagentStop       Event = "SubagentStop"
	TeammateIdle       Event = "TeammateIdle"
	TaskCompleted      Event = "TaskCompleted"
	WorktreeCreate     Event = "WorktreeCreate"
	WorktreeRemove     Event = "WorktreeRemove"
	SessionStart       Event = "SessionStart"
	SessionEnd         Event = "SessionEnd"
	Notification       Event = "Notification"
	PreCompact         Event = "PreCompact"
	PermissionRequest  Event = "PermissionRequest"
	PostToolBatch      Event = "PostToolBatch"
	StopFailure        Event = "StopFailure"
	TaskCreated        Event = "TaskCreated"
	PostCompact        Event = "PostCompact"
	Interrupt          Event = "Interrupt"
	CwdChanged         Event = "CwdChanged"
	InstructionsLoaded Event = "InstructionsLoaded"
	PreModelSwitch     Event = "PreModelSwitch"
	PostModelSwitch    Event = "PostModelSwitch"
	// UserPromptExpansion fires when a prompt names a custom slash command,
	// before the command's text replaces it.
	UserPromptExpansion Event = "UserPromptExpansion"
)

// Events lists every event Cohort fires, in a stable order.
var Events = []Event{
	PreToolUse, PostToolUse, PostToolUseFailure, UserPromptSubmit, Stop,
	SubagentStart, SubagentStop, TeammateIdle, TaskCompleted,
	WorktreeCreate, WorktreeRemove, SessionStart, SessionEnd, Notification,
	PreCompact, PermissionRequest, PostToolBatch, StopFailure, TaskCreated,
	PostCompact, Interrupt, CwdChanged, InstructionsLoaded, PreModelSwitch,
	PostModelSwitch, UserPromptExpansion,
}

// notFired are the Claude Code events (Agent SDK 0.3.337's HOOK_EVENTS)
// Cohort does not fire; the package doc says why for each. A settings file
// shared with Claude Code may configure them: they load, and a warning
// says they never run, since a hook that never runs should not go
// unnoticed.
var notFired = []string{"PermissionDenied", "Setup", "Elicitation",
	"ElicitationResult", "ConfigChange", "FileChanged", "DirectoryAdded", "MessageDisplay",
	"PreSkillShellCommand"}

func (e Event) known() bool { return slices.Contains(Events, e) }

// toolEvent reports whether the event is about one tool call (the matcher
// applies to the tool name, and "if" conditions apply).
func (e Event) toolEvent() bool {
	return e == PreToolUse || e == PostToolUse || e == PostToolUseFailure || e == PermissionRequest
}

// agentEvent reports whether the matcher applies to an agent type.
func (e Event) agentEvent() bool { return e == SubagentStart || e == SubagentStop }

// matchedName returns what the matcher of e is compared with in in, and
// false for the events that ignore their matcher: the tool name for tool
// events, the agent type for SubagentStart and SubagentStop, the source of
// a SessionStart, the reason of a SessionEnd, the notification_type of a
// Notification, the trigger of a PreCompact and the load_reason of an
// InstructionsLoaded (Claude Code's choices).
func (e Event) matchedName(in *Input) (string, bool) {
	switch {
	case e.toolEvent():
		return in.ToolName, true
	case e.agentEvent():
		return in.AgentType, true
	}
	switch e {
	case SessionStart:
		return in.Source, true
	case SessionEnd:
		return in.EndReason, true
	case Notification:
		return in.NotificationType, true
	case PreCompact, PostCompact:
		return in.Trigger, true
	case StopFailure:
		return in.Error, true
	case InstructionsLoaded:
		return in.LoadReason, true
	case UserPromptExpansion:
		return in.CommandName, true
	}
	return "", false
}

// blockable reports whether a blocking answer (exit 2, decision "block")
// changes what happens next. For the other events it is only reported.
func (e Event) blockable() bool {
	switch e {
	case PreToolUse, UserPromptSubmit, Stop, SubagentStop, TeammateIdle, TaskCompleted, WorktreeCreate,
		PreCompact, PermissionRequest, TaskCreated, PreModelSwitch, UserPromptExpansion:
		return true
	}
	return false
}

// suggest returns the event name s was probably meant to be, or "".
func suggest(s string) string {
	for _, e := range Events {
		if strings.EqualFold(string(e), s) || spelling.Distance(strings.ToLower(string(e)), strings.ToLower(s)) <= 2 {
			return string(e)
		}
	}
	return ""
}

// simpleMatcher is a matcher made only of names and "|": it lists exact
// names rather than being a regular expression (Claude Code's rule; spaces
// around "|" are also allowed here).
var simpleMatcher = lazyre.New(`^[A-Za-z0-9_| ]+$`)

// matcher decides which tool names (or agent types) a group applies to.
type matcher struct {
	all   bool
	names []string
	re    *regexp.Regexp
}

// compileMatcher follows Claude Code: empty or "*" matches everything; a
// pattern of letters, digits, "_" and "|" lists exact names; anything else
// is a regular expression that must match somewhere in the name
// (unanchored). A pattern that does not compile matches everything, so a
// guard with a typo in its matcher still runs (failing closed), and the
// error is returned for the caller to report.
func compileMatcher(s string) (matcher, error) {
	if strings.TrimSpace(s) == "" || s == "*" {
		return matcher{all: true}, nil
	}
	if simpleMatcher.MatchString(s) {
		var names []string
		for n := range strings.SplitSeq(s, "|") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
		return matcher{names: names}, nil
	}
	re, err := regexp.Compile(s)
	if err != nil {
		return matcher{all: true}, err
	}
	return matcher{re: re}, nil
}

func (m matcher) match(name string) bool {
	switch {
	case m.all:
		return true
	case m.re != nil:
		return m.re.MatchString(name)
	}
	return slices.Contains(m.names, name)
}
