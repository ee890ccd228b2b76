package hook

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/settings"
)

// MaxTimeout bounds a configured timeout; longer values are refused.
const MaxTimeout = 24 * time.Hour

// Command is one configured hook: a shell command that runs when Event
// fires and Matcher matches. Commands are immutable once parsed.
type Command struct {
	Event Event
	// Matcher is the group's matcher as written ("" matches everything).
	Matcher string
	// Cmd is the shell command, run with sh -c.
	Cmd string
	// Timeout is the configured limit; 0 means the runner's default.
	Timeout time.Duration
	// Source is the settings file or agent definition the command came
	// from; Line and Col locate it (0 when unknown); Key is its JSON path,
	// e.g. "hooks.PreToolUse[0].hooks[1]".
	Source    string
	Line, Col int
	Key       string
	// If is the entry's "if" condition as written: a permission rule such
	// as "Write(.env*)" that a tool call must match for the command to run
	// ("" for none).
	If string
	// Type is the hook's type: TypeCommand (Cmd runs in a shell), TypeHTTP
	// (the input is POSTed to URL; Cmd is the URL), TypePrompt (a model
	// call decides) or TypeAgent (an agent with read-only tools decides);
	// for the last two Cmd is the prompt.
	Type string
	// URL, Headers and AllowedEnvVars configure an http hook: header values
	// may name environment variables ($VAR, ${VAR}) listed in
	// AllowedEnvVars.
	URL            string
	Headers        map[string]string
	AllowedEnvVars []string
	// Model is a prompt or agent hook's model ("" for the runner's
	// default); ContinueOnBlock lets the agent go on when it answers not ok.
	Model           string
	ContinueOnBlock bool
	// Unsandboxed is set by "sandbox": false on a command hook in a user,
	// project or local settings file: it runs outside the sandbox (see
	// "The sandbox" in the package doc).
	Unsandboxed bool

	match matcher
	cond  *condition
	fn    Func // a Go hook (FromFuncs) instead of a shell command
}

// The hook types.
const (
	TypeCommand = "command"
	TypeHTTP    = "http"
	TypePrompt  = "prompt"
	TypeAgent   = "agent"
)

// Matches reports whether the command's matcher accepts name: the tool
// name for tool events, the agent type for SubagentStart and SubagentStop,
// the source, reason, notification type or trigger for SessionStart,
// SessionEnd, Notification and PreCompact. Other events ignore the
// matcher. The "if" condition is not consulted (it needs the call).
func (c *Command) Matches(name string) bool {
	if _, ok := c.Event.matchedName(&Input{}); !ok {
		return true
	}
	return c.match.match(name)
}

// configuredAt names where the command is configured, for messages:
// " (from path:line)", or "" when unknown.
func (c *Command) configuredAt() string {
	switch {
	case c.Source == "":
		return ""
	case c.Line > 0:
		return fmt.Sprintf(" (from %s:%d)", c.Source, c.Line)
	}
	return fmt.Sprintf(" (from %s, %s)", c.Source, c.Key)
}

func (c *Command) String() string {
	if c.Line > 0 {
		return fmt.Sprintf("%s (%s:%d, %s)", c.Cmd, c.Source, c.Line, c.Key)
	}
	return fmt.Sprintf("%s (%s, %s)", c.Cmd, c.Source, c.Key)
}

// Set is a parsed hook configuration: the commands of each event in
// configuration order (lowest-precedence source first). A nil *Set holds
// nothing. Safe for concurrent use; never modified after construction.
type Set struct {
	byEvent map[Event][]*Command
}

// Commands returns the commands configured for ev, in order.
func (s *Set) Commands(ev Event) []*Command {
	if s == nil {
		return nil
	}
	return slices.Clone(s.byEvent[ev])
}

// Len returns the number of commands across all events.
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	n := 0
	for _, cs := range s.byEvent {
		n += len(cs)
	}
	return n
}

// Merge returns a Set holding the commands of every set in argument order.
func Merge(sets ...*Set) *Set {
	out := &Set{byEvent: map[Event][]*Command{}}
	for _, s := range sets {
		if s == nil {
			continue
		}
		for _, ev := range Events {
			out.byEvent[ev] = append(out.byEvent[ev], s.byEvent[ev]...)
		}
	}
	return out
}

// asSubagent returns s with its Stop commands moved to SubagentStop: an
// agent definition's Stop hooks fire when that agent, running as a
// subagent, finishes (Claude Code converts them the same way).
func (s *Set) asSubagent() *Set {
	if s == nil || len(s.byEvent[Stop]) == 0 {
		return s
	}
	out := &Set{byEvent: map[Event][]*Command{}}
	for ev, cs := range s.byEvent {
		out.byEvent[ev] = cs
	}
	for _, c := range s.byEvent[Stop] {
		moved := *c
		moved.Event = SubagentStop
		out.byEvent[SubagentStop] = append(out.byEvent[SubagentStop], &moved)
	}
	delete(out.byEvent, Stop)
	return out
}

// matching returns the commands for in's event that apply to it (matcher,
// then "if" condition), dropping repeats of the same command text (it runs
// once, as in Claude Code). home resolves "~/" in conditions.
func (s *Set) matching(in *Input, home string) []*Command {
	if s == nil {
		return nil
	}
	ev := in.HookEventName
	name, _ := ev.matchedName(in)
	var out []*Command
	seen := map[string]bool{}
	for _, c := range s.byEvent[ev] {
		key := c.Type + "\x00" + c.Cmd
		if !c.Matches(name) || seen[key] || !c.cond.holds(in, home) {
			continue
		}
		seen[key] = true
		out = append(out, c)
	}
	return out
}

// FromSettings reads the "hooks" section of every settings source. A
// broken entry is skipped and reported with its file, line and JSON path;
// the rest still load. Sources that could not be parsed at all were
// already reported by the settings package and hold no hooks.
func FromSettings(s *settings.Settings) (*Set, []*settings.Problem) {
	set := &Set{byEvent: map[Event][]*Command{}}
	var probs []*settings.Problem
	for _, sec := range s.Section("hooks") {
		o := origin{path: sec.Source.Path, root: sec.Source.Root, raw: sec.Value, line: sec.Line, col: sec.Col, scope: sec.Source.Scope,
			approved: sec.Source.Approved}
		probs = append(probs, o.parse(set)...)
	}
	return set, probs
}

// FromDefinition reads the hooks of an agent definition's frontmatter
// (agent.Definition.Hooks: YAML decoded into JSON-compatible values). path
// names the definition file in problems. The format is the settings one.
func FromDefinition(path string, hooks any) (*Set, []*settings.Problem) {
	set := &Set{byEvent: map[Event][]*Command{}}
	if hooks == nil {
		return set, nil
	}
	raw, err := json.Marshal(hooks)
	if err != nil {
		return set, []*settings.Problem{{Path: path, Key: "hooks",
			Msg: fmt.Sprintf("cannot be read (%v); write it in the settings.json hooks format", err)}}
	}
	o := origin{path: path, raw: raw}
	return set, o.parse(set)
}

// origin is one "hooks" value and where it sits in its file.
type origin struct {
	path      string
	root      string // what "/x" in an "if" rule resolves against; "" for the agent's cwd
	raw       []byte
	line, col int // where raw starts; 0 when unknown (frontmatter)
	// scope is the settings layer of the file; "" for an agent
	// definition. It decides whether "sandbox": false is honoured.
	scope settings.Scope
	// approved marks a file obeyed only as a person approved its content
	// (settings.Source.Approved): its "sandbox": false is not honoured.
	approved bool
}

func (o origin) problem(off int, key, format string, args ...any) *settings.Problem {
	p := &settings.Problem{Path: o.path, Key: key, Msg: fmt.Sprintf(format, args...)}
	p.Line, p.Col = o.pos(off)
	return p
}

// pos converts an offset in raw into a line and column of the file.
func (o origin) pos(off int) (line, col int) {
	if o.line == 0 {
		return 0, 0
	}
	before := o.raw[:min(max(off, 0), len(o.raw))]
	nl := bytes.Count(before, []byte{'\n'})
	if nl == 0 {
		return o.line, o.col + utf8.RuneCount(before)
	}
	last := bytes.LastIndexByte(before, '\n')
	return o.line + nl, 1 + utf8.RuneCount(before[last+1:])
}

func (o origin) parse(set *Set) []*settings.Problem {
	if bytes.Equal(bytes.TrimSpace(o.raw), []byte("null")) {
		return nil
	}
	evs, err := members(o.raw, '{', 0)
	if err != nil {
		return []*settings.Problem{o.problem(0, "hooks",
			"must be an object mapping event names to lists of matcher groups, not %s; no hooks from this file run", kindOf(o.raw))}
	}
	var probs []*settings.Problem
	for _, ev := range evs {
		key := "hooks." + ev.key
		if !Event(ev.key).known() {
			probs = append(probs, o.unknownEvent(ev, key))
			continue
		}
		groups, err := members(ev.val, '[', ev.off)
		if err != nil {
			probs = append(probs, o.problem(ev.off, key,
				`must be an array of {"matcher": …, "hooks": […]} groups, not %s; these hooks never run`, kindOf(ev.val)))
			continue
		}
		for gi, g := range groups {
			cmds, ps := o.group(Event(ev.key), fmt.Sprintf("%s[%d]", key, gi), g)
			set.byEvent[Event(ev.key)] = append(set.byEvent[Event(ev.key)], cmds...)
			probs = append(probs, ps...)
		}
	}
	return probs
}

func (o origin) unknownEvent(ev member, key string) *settings.Problem {
	if slices.Contains(notFired, ev.key) {
		return o.problem(ev.keyOff, key, "%q is a Claude Code hook event that Cohort does not fire; these hooks never run", ev.key)
	}
	hint := ""
	if s := suggest(ev.key); s != "" {
		hint = fmt.Sprintf(" (did you mean %q?)", s)
	} else {
		names := make([]string, len(Events))
		for i, e := range Events {
			names[i] = string(e)
		}
		hint = "; the events are " + strings.Join(names, ", ")
	}
	return o.problem(ev.keyOff, key, "%q is not a hook event Cohort fires%s; these hooks never run", ev.key, hint)
}

// group parses one {"matcher": …, "hooks": […]} object.
func (o origin) group(ev Event, key string, g member) ([]*Command, []*settings.Problem) {
	fields, err := members(g.val, '{', g.off)
	if err != nil {
		return nil, []*settings.Problem{o.problem(g.off, key,
			`must be an object {"matcher": "Write|Edit", "hooks": […]}, not %s; it is skipped`, kindOf(g.val))}
	}
	var probs []*settings.Problem
	var pattern string
	var list *member
	for _, f := range fields {
		switch f.key {
		case "matcher":
			if err := json.Unmarshal(f.val, &pattern); err != nil && kindOf(f.val) != "null" {
				return nil, append(probs, o.problem(f.off, key+".matcher",
					`must be a string such as "Write|Edit" or "*", not %s; the group is skipped`, kindOf(f.val)))
			}
		case "hooks":
			list = &f
		default:
			probs = append(probs, o.problem(f.keyOff, key+"."+f.key, `unknown key; a group has only "matcher" and "hooks" (ignored)`))
		}
	}
	if list == nil {
		return nil, append(probs, o.problem(g.off, key,
			`has no "hooks" list; add "hooks": [{"type": "command", "command": "…"}] (the group is skipped)`))
	}
	m, err := compileMatcher(pattern)
	if err != nil {
		probs = append(probs, o.problem(g.off, key+".matcher",
			"%q is not a valid regular expression (%v); until it is fixed these hooks run for every name", pattern, err))
	}
	entries, err := members(list.val, '[', list.off)
	if err != nil {
		return nil, append(probs, o.problem(list.off, key+".hooks",
			`must be an array of {"type": "command", "command": "…"} objects, not %s; the group is skipped`, kindOf(list.val)))
	}
	var cmds []*Command
	for i, e := range entries {
		c, ps := o.command(ev, fmt.Sprintf("%s.hooks[%d]", key, i), e)
		probs = append(probs, ps...)
		if c != nil {
			c.Matcher, c.match = pattern, m
			cmds = append(cmds, c)
		}
	}
	return cmds, probs
}

// command parses one {"type": "command", "command": "…", "timeout": N}.
func (o origin) command(ev Event, key string, e member) (*Command, []*settings.Problem) {
	fields, err := members(e.val, '{', e.off)
	if err != nil {
		return nil, []*settings.Problem{o.problem(e.off, key,
			`must be an object {"type": "command", "command": "…"}, not %s; it is skipped`, kindOf(e.val))}
	}
	var probs []*settings.Problem
	c := &Command{Event: ev, Source: o.path, Key: key}
	c.Line, c.Col = o.pos(e.off)
	typ, hasType := "", false
	var prompt string
	var sandbox *member
	for _, f := range fields {
		switch f.key {
		case "type":
			hasType = true
			if json.Unmarshal(f.val, &typ) != nil {
				typ = "(" + kindOf(f.val) + ")"
			}
		case "command", "url", "prompt", "model":
			dst := map[string]*string{"command": &c.Cmd, "url": &c.URL, "prompt": &prompt, "model": &c.Model}[f.key]
			if json.Unmarshal(f.val, dst) != nil {
				return nil, append(probs, o.problem(f.off, key+"."+f.key,
					"must be a string, not %s; the hook is skipped", kindOf(f.val)))
			}
		case "headers":
			if json.Unmarshal(f.val, &c.Headers) != nil {
				return nil, append(probs, o.problem(f.off, key+".headers",
					`must be an object of strings ({"Authorization": "Bearer $TOKEN"}), not %s; the hook is skipped`, kindOf(f.val)))
			}
		case "allowedEnvVars":
			if json.Unmarshal(f.val, &c.AllowedEnvVars) != nil {
				return nil, append(probs, o.problem(f.off, key+".allowedEnvVars",
					`must be an array of variable names, not %s; the hook is skipped`, kindOf(f.val)))
			}
		case "continueOnBlock":
			if json.Unmarshal(f.val, &c.ContinueOnBlock) != nil {
				probs = append(probs, o.problem(f.off, key+".continueOnBlock", "must be true or false, not %s; false applies", kindOf(f.val)))
			}
		case "timeout":
			d, msg := timeoutOf(f.val)
			if msg != "" {
				probs = append(probs, o.problem(f.off, key+".timeout", "%s; the default timeout applies", msg))
			}
			c.Timeout = d
		case "if":
			if p := o.condition(ev, key+".if", f, c); p != nil {
				probs = append(probs, p)
			}
		case "sandbox":
			sandbox = &f
		}
		// Other keys (statusMessage, once, async, …) are Claude Code
		// options Cohort does not use; they are ignored quietly so a file
		// shared with Claude Code loads without noise.
	}
	if !hasType {
		typ = TypeCommand
		probs = append(probs, o.problem(e.off, key+".type",
			`is missing; add "type": "command" (the hook runs as a command meanwhile)`))
	}
	c.Type = typ
	switch typ {
	case TypeCommand:
		if strings.TrimSpace(c.Cmd) == "" {
			return nil, append(probs, o.problem(e.off, key+".command",
				`is missing or empty; give the shell command to run (the hook is skipped)`))
		}
	case TypeHTTP:
		if p := o.checkURL(e.off, key, c.URL); p != nil {
			return nil, append(probs, p)
		}
		c.Cmd = c.URL
	case TypePrompt, TypeAgent:
		if strings.TrimSpace(prompt) == "" {
			return nil, append(probs, o.problem(e.off, key+".prompt",
				`is missing or empty; say what the model should check, with $ARGUMENTS where the event's input goes (the hook is skipped)`))
		}
		c.Cmd = prompt
	default:
		return nil, append(probs, o.problem(e.off, key+".type",
			`hook type %q is not supported (Cohort runs "command", "http", "prompt" and "agent" hooks); the hook is skipped`, typ))
	}
	if sandbox != nil {
		if p := o.sandboxOpt(key+".sandbox", *sandbox, c); p != nil {
			probs = append(probs, p)
		}
	}
	return c, probs
}

// checkURL reports an http hook's url that is missing or not an absolute
// http or https URL.
func (o origin) checkURL(off int, key, raw string) *settings.Problem {
	u, err := url.Parse(raw)
	if strings.TrimSpace(raw) == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return o.problem(off, key+".url", `must be an http or https URL to POST the event's input to, not %q; the hook is skipped`, raw)
	}
	return nil
}

// condition reads an entry's "if". A condition that cannot be read is
// reported and dropped, so the hook runs for every call its matcher
// accepts: the hook is usually a guard, and failing closed means running
// it too often rather than never.
func (o origin) condition(ev Event, key string, f member, c *Command) *settings.Problem {
	if json.Unmarshal(f.val, &c.If) != nil {
		return o.problem(f.off, key, `must be a permission rule as a string, such as "Write(.env*)", not %s; until it is fixed the hook runs for every call its matcher accepts`, kindOf(f.val))
	}
	if strings.TrimSpace(c.If) == "" {
		c.If = ""
		return nil
	}
	if !ev.toolEvent() {
		return o.problem(f.off, key, `applies to tool events only (PreToolUse, PostToolUse, PostToolUseFailure, PermissionRequest); it is ignored for %s`, ev)
	}
	if _, err := permission.ParseRule(c.If); err != nil {
		return o.problem(f.off, key, "%v; until it is fixed the hook runs for every call its matcher accepts", err)
	}
	c.cond = newCondition(c.If, o.root)
	return nil
}

// timeoutOf reads a timeout in seconds; it returns a message when the value
// is unusable.
func timeoutOf(raw json.RawMessage) (time.Duration, string) {
	var secs float64
	if err := json.Unmarshal(raw, &secs); err != nil {
		return 0, fmt.Sprintf("must be a number of seconds, not %s", kindOf(raw))
	}
	if math.IsNaN(secs) || secs <= 0 || secs > MaxTimeout.Seconds() {
		return 0, fmt.Sprintf("must be more than 0 and at most %d seconds, not %v", int(MaxTimeout.Seconds()), secs)
	}
	return time.Duration(secs * float64(time.Second)), ""
}
