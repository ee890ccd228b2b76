// Package scenario defines the end-to-end benchmark workloads: the prompt
// the lead agent gets, the replies the fake model gives every agent of the
// run, and the checks that prove the run did the work it was timed for.
//
// A run is two processes: the cohort binary, and bench/cmd/fakeserve
// answering its requests with a [Policy]. They share nothing but the lead's
// prompt, so a Spec travels inside it ([Spec.Prompt], [ParsePrompt]) and the
// fake needs no configuration of its own: one fakeserve serves every
// workload.
//
// Design decisions:
//
//   - Replies are keyed on the conversation, never on arrival order: the lead
//     is recognised by the "bench-lead" line of its first user message, a
//     subagent by the "bench-sub" line of its prompt, and the reply is picked
//     by the number of assistant messages so far (for the lead: by the
//     highest agent id it has started). A thousand agents talking at once
//     each get their own script.
//   - The policy proves the work happened rather than trusting exit codes:
//     every tool result a subagent sends back must not be an error (so a Bash
//     call refused by permissions fails the run), and the lead must have
//     received one Agent result per spawned agent and, for background agents,
//     exactly one <task-notification> per agent (none lost, none twice).
//   - Counts survive compaction of the lead's history: every lead request is
//     scanned in full (linear, no regular expressions) and the Agent results,
//     notified task ids and reports found are merged into sets, so a
//     notification summarised away later still counts, and one that appears
//     twice in any single request is a duplicate. The lead's text replies
//     carry the spec line with the next agent id, so that after compaction
//     (when the first user message is the summary) the fake still knows the
//     run and does not start agents twice.
package scenario

import (
	"fmt"
	"strconv"
	"strings"
)

// Tool sets a subagent can be asked to cycle through, one call a turn.
const (
	// ToolsBash runs `echo` through Bash every turn.
	ToolsBash = "bash"
	// ToolsMixed cycles Read (of Spec.File), Glob and Bash `true`.
	ToolsMixed = "mixed"
)

// Spec is one workload.
type Spec struct {
	// Agents is how many subagents the lead starts.
	Agents int
	// Turns is how many tool calls each subagent makes, one per model turn,
	// before its final report.
	Turns int
	// PerMessage is how many Agent calls go in one lead message (0: all of
	// them in the first).
	PerMessage int
	// Background starts the agents with run_in_background: true.
	Background bool
	// Tools is ToolsBash or ToolsMixed.
	Tools string
	// File is the absolute path ToolsMixed reads; Glob looks in its
	// directory.
	File string
	// PerPrompt starts the next message of agents only in reply to a user
	// prompt that says NextPrompt (one batch per Run, for the soak); the
	// lead's other turns wait.
	PerPrompt bool
	// Brief is the size in bytes of each subagent's prompt, as the lead
	// writes it in its Agent call (0: a short line). A real lead writes
	// briefs of 100 – 400 tokens, so at a model's pace a fan-out message
	// streams for seconds.
	Brief int
}

// NextPrompt is the user prompt that starts a PerPrompt spec's next batch.
const NextPrompt = "bench-next: start the next batch"

const (
	leadTag = "bench-lead"
	subTag  = "bench-sub"
)

// Validate reports a Spec the policy could not serve.
func (s Spec) Validate() error {
	switch {
	case s.Agents < 1:
		return fmt.Errorf("scenario: agents=%d; start at least one agent", s.Agents)
	case s.Turns < 0:
		return fmt.Errorf("scenario: turns=%d must not be negative", s.Turns)
	case s.PerMessage < 0:
		return fmt.Errorf("scenario: per-message=%d must not be negative", s.PerMessage)
	case s.Tools != ToolsBash && s.Tools != ToolsMixed:
		return fmt.Errorf("scenario: tools=%q is not %q or %q", s.Tools, ToolsBash, ToolsMixed)
	case s.Tools == ToolsMixed && !strings.HasPrefix(s.File, "/"):
		return fmt.Errorf("scenario: tools=mixed needs an absolute file=, got %q", s.File)
	case strings.ContainsAny(s.File, " \n"):
		return fmt.Errorf("scenario: file=%q must not contain spaces or newlines", s.File)
	case s.Brief < 0:
		return fmt.Errorf("scenario: brief=%d must not be negative", s.Brief)
	}
	return nil
}

// BashCalls returns how many Bash processes a run of the spec starts: one
// per turn with ToolsBash, every third turn with ToolsMixed.
func (s Spec) BashCalls() int {
	if s.Tools == ToolsMixed {
		return s.Agents * (s.Turns / 3)
	}
	return s.Agents * s.Turns
}

// Prompt renders the lead's prompt: one line the fake parses, then prose.
func (s Spec) Prompt() string {
	return s.line() + "\nBenchmark run: start the agents, wait for all of them, then report."
}

func (s Spec) line() string {
	line := fmt.Sprintf("%s agents=%d turns=%d per-message=%d background=%t tools=%s file=%s",
		leadTag, s.Agents, s.Turns, s.PerMessage, s.Background, s.Tools, s.File)
	if s.PerPrompt {
		line += " per-prompt=true"
	}
	if s.Brief > 0 {
		line += fmt.Sprintf(" brief=%d", s.Brief)
	}
	return line
}

// progressLine is the spec line plus the id of the next agent to start. The
// lead's text replies carry it, so that a summary written when the lead's
// history is compacted still tells the fake where the run stands.
func (s Spec) progressLine(next int) string {
	return fmt.Sprintf("%s next=%d", s.line(), next)
}

// messages returns how many lead messages carry Agent calls.
func (s Spec) messages() int {
	per := s.perMessage()
	return (s.Agents + per - 1) / per
}

func (s Spec) perMessage() int {
	if s.PerMessage <= 0 || s.PerMessage > s.Agents {
		return s.Agents
	}
	return s.PerMessage
}

// ParsePrompt finds the bench-lead line in text and decodes it. ok is false
// when text holds no such line; err reports a line that does not decode.
func ParsePrompt(text string) (s Spec, ok bool, err error) {
	s, _, ok, err = parseLead(text)
	return s, ok, err
}

// parseLead is ParsePrompt that also returns the next= field of a progress
// line (0 when absent).
func parseLead(text string) (s Spec, next int, ok bool, err error) {
	fields, ok := tagFields(text, leadTag)
	if !ok {
		return Spec{}, 0, false, nil
	}
	for _, f := range fields {
		k, v, found := strings.Cut(f, "=")
		if !found {
			return Spec{}, 0, true, fmt.Errorf("scenario: %s field %q is not key=value", leadTag, f)
		}
		switch k {
		case "agents":
			s.Agents, err = strconv.Atoi(v)
		case "turns":
			s.Turns, err = strconv.Atoi(v)
		case "per-message":
			s.PerMessage, err = strconv.Atoi(v)
		case "background":
			s.Background, err = strconv.ParseBool(v)
		case "tools":
			s.Tools = v
		case "file":
			s.File = v
		case "per-prompt":
			s.PerPrompt, err = strconv.ParseBool(v)
		case "brief":
			s.Brief, err = strconv.Atoi(v)
		case "next":
			next, err = strconv.Atoi(v)
		default:
			return Spec{}, 0, true, fmt.Errorf("scenario: %s has an unknown field %q", leadTag, k)
		}
		if err != nil {
			return Spec{}, 0, true, fmt.Errorf("scenario: %s field %s: %w", leadTag, k, err)
		}
	}
	return s, next, true, s.Validate()
}

// tagFields returns the space-separated fields after tag on the first line
// that starts with it.
func tagFields(text, tag string) ([]string, bool) {
	for line := range strings.Lines(text) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), tag+" ")
		if ok {
			return strings.Fields(rest), true
		}
	}
	return nil, false
}

// sub is what a subagent's prompt tells the fake about it.
type sub struct {
	id    int
	turns int
	tools string
	file  string
}

func (s Spec) subPrompt(id int) string {
	p := fmt.Sprintf("%s id=%d turns=%d tools=%s file=%s\nBenchmark worker %d: make the tool calls you are given, then report.",
		subTag, id, s.Turns, s.Tools, s.File, id)
	if pad := s.Brief - len(p); pad > 0 {
		p += "\n" + strings.Repeat(briefFiller, pad/len(briefFiller)+1)[:pad-1]
	}
	return p
}

// briefFiller pads a subagent's prompt to Spec.Brief bytes, as a longer
// brief would read.
const briefFiller = "Work through the steps in order, keep each command small, and say what each one printed. "

func parseSub(text string) (sub, bool, error) {
	fields, ok := tagFields(text, subTag)
	if !ok {
		return sub{}, false, nil
	}
	var w sub
	for _, f := range fields {
		k, v, _ := strings.Cut(f, "=")
		var err error
		switch k {
		case "id":
			w.id, err = strconv.Atoi(v)
		case "turns":
			w.turns, err = strconv.Atoi(v)
		case "tools":
			w.tools = v
		case "file":
			w.file = v
		default:
			err = fmt.Errorf("unknown field")
		}
		if err != nil {
			return sub{}, true, fmt.Errorf("scenario: %s field %q: %w", subTag, f, err)
		}
	}
	return w, true, nil
}
