package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/internal/proc"
)

// Decision is a PreToolUse permission decision.
type Decision string

// Decisions, weakest first. When hooks disagree the strongest wins.
const (
	NoDecision Decision = ""
	Allow      Decision = "allow"
	Ask        Decision = "ask"
	Deny       Decision = "deny"
)

func (d Decision) rank() int {
	switch d {
	case Allow:
		return 1
	case Ask:
		return 2
	case Deny:
		return 3
	}
	return 0
}

// output is the JSON a hook may print on stdout when it exits 0 (Claude
// Code's fields). Unknown fields are ignored; a known field of the wrong
// type makes the whole answer unreadable.
type output struct {
	Continue       *bool           `json:"continue"`
	StopReason     string          `json:"stopReason"`
	SuppressOutput bool            `json:"suppressOutput"`
	SystemMessage  string          `json:"systemMessage"`
	Decision       string          `json:"decision"`
	Reason         string          `json:"reason"`
	Specific       *specificOutput `json:"hookSpecificOutput"`
}

type specificOutput struct {
	HookEventName            string          `json:"hookEventName"`
	PermissionDecision       string          `json:"permissionDecision"`
	PermissionDecisionReason string          `json:"permissionDecisionReason"`
	UpdatedInput             json.RawMessage `json:"updatedInput"`
	AdditionalContext        string          `json:"additionalContext"`
	// Decision is PermissionRequest's answer.
	Decision *requestDecision `json:"decision"`
}

// requestDecision is a PermissionRequest hook's answer to a permission
// prompt: behavior allow or deny, optionally a rewritten input (allow), a
// message for the model (deny) and interrupt (deny and stop the agent).
type requestDecision struct {
	Behavior     string          `json:"behavior"`
	UpdatedInput json.RawMessage `json:"updatedInput"`
	Message      string          `json:"message"`
	Interrupt    bool            `json:"interrupt"`
}

// ran is what happened when one command ran.
type ran struct {
	cmd       *Command
	exit      proc.Exit
	err       error // it could not be started or observed
	stdout    string
	stdoutCut bool
	stderr    string
	dur       time.Duration
	// refused says what writes the sandbox refused the command (Sandbox.Explain).
	refused string
}

// verdict is one command's answer, interpreted for its event.
type verdict struct {
	decision   Decision // PreToolUse only
	block      bool
	reason     string
	input      json.RawMessage
	context    string
	stop       bool
	stopReason string
	message    string // for the user
	err        error  // the hook failed; execution continues
}

func (v verdict) label() string {
	switch {
	case v.block && v.decision == Deny:
		return "deny"
	case v.block:
		return "block"
	case v.stop:
		return "stop"
	case v.err != nil:
		return "error"
	case v.decision != NoDecision:
		return string(v.decision)
	case v.context != "":
		return "context"
	}
	return "none"
}

// interpret turns one run into a verdict for ev; a confined command's
// refused writes are told to the user besides, its answer unchanged.
func interpret(ev Event, r ran) verdict {
	v := interpretRun(ev, r)
	if note := refusal(ev, r.cmd, r.refused); note != "" {
		v.message = strings.TrimSpace(v.message + "\n" + note)
	}
	return v
}

// interpretRun reads one run's answer for ev (Claude Code's protocol).
func interpretRun(ev Event, r ran) verdict {
	stderr := strings.TrimSpace(r.stderr)
	at := r.cmd.configuredAt()
	switch {
	case r.err != nil:
		return failed(fmt.Errorf("%s hook %q%s could not run: %w", ev, r.cmd.Cmd, at, r.err))
	case errors.Is(r.exit.Stopped, proc.ErrTimeout):
		return failed(fmt.Errorf("%s hook %q%s timed out after %s and was stopped; make it faster or raise its \"timeout\" (seconds)",
			ev, r.cmd.Cmd, at, r.dur.Round(time.Millisecond)))
	case r.exit.Stopped != nil:
		err := fmt.Errorf("%s hook %q%s was interrupted: %w", ev, r.cmd.Cmd, at, r.exit.Stopped)
		if ev == PreToolUse {
			return verdict{decision: Deny, block: true, reason: "the call was interrupted while a PreToolUse hook was checking it", err: err}
		}
		return failed(err)
	case r.exit.Signal != 0:
		return failed(fmt.Errorf("%s hook %q%s was killed by %s%s", ev, r.cmd.Cmd, at, r.exit.Signal, withText(stderr)))
	case r.exit.Code == 2:
		if stderr == "" {
			stderr = fmt.Sprintf("the %s hook %q exited with status 2 without saying why", ev, r.cmd.Cmd)
		}
		return blocking(ev, stderr)
	case r.exit.Code != 0 && r.cmd.Type != TypeCommand && r.cmd.Type != "":
		return failed(fmt.Errorf("%s %s hook %q%s failed: %s", ev, r.cmd.Type, r.cmd.Cmd, at, stderr))
	case r.exit.Code == 126 || r.exit.Code == 127:
		return failed(fmt.Errorf("%s hook %q%s could not start its program (status %d: %s)%s; check that it exists, is executable and is on PATH",
			ev, r.cmd.Cmd, at, r.exit.Code, map[int]string{126: "not executable", 127: "not found"}[r.exit.Code], withText(stderr)))
	case r.exit.Code != 0:
		return failed(fmt.Errorf("%s hook %q%s exited with status %d%s", ev, r.cmd.Cmd, at, r.exit.Code, withText(stderr)))
	}
	text := strings.TrimSpace(r.stdout)
	switch {
	case text == "":
		return verdict{}
	case text[0] != '{' && ev == PreToolUse && jsonLine(text):
		// A log line before the answer: the answer may be a deny.
		return unreadable(ev, r.cmd, "printed other text around its JSON answer (the answer must be all of stdout)")
	case text[0] != '{':
		if ev == UserPromptSubmit || ev == SessionStart || ev == UserPromptExpansion {
			return verdict{context: text} // plain output is context, as in Claude Code
		}
		return verdict{} // plain output of other events is only logged
	case r.stdoutCut:
		return unreadable(ev, r.cmd, fmt.Sprintf("printed more than %d bytes", stdoutLimit))
	}
	var out output
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		return unreadable(ev, r.cmd, fmt.Sprintf("printed invalid JSON (%v)", err))
	}
	return answer(ev, r.cmd, out)
}

// jsonLine reports whether a line of text starts like a JSON object.
func jsonLine(text string) bool {
	for line := range strings.Lines(text) {
		if strings.HasPrefix(strings.TrimSpace(line), "{") {
			return true
		}
	}
	return false
}

func withText(s string) string {
	if s == "" {
		return ""
	}
	return ": " + s
}

func failed(err error) verdict { return verdict{err: err, message: err.Error()} }

// blocking is a blocking answer (exit 2 or decision "block") for ev.
func blocking(ev Event, reason string) verdict {
	switch {
	case ev == PostToolUse || ev == PostToolUseFailure || ev == PostToolBatch:
		return verdict{context: reason} // the tools already ran: tell the model
	case ev == PreToolUse || ev == PermissionRequest:
		return verdict{decision: Deny, block: true, reason: reason}
	case ev.blockable():
		return verdict{block: true, reason: reason}
	}
	return verdict{message: reason} // cannot block: tell the user
}

// unreadable is a hook whose stdout looked like JSON but could not be read.
// For PreToolUse that answer might have been a deny, so the call is
// blocked; elsewhere it is a non-blocking error.
func unreadable(ev Event, c *Command, why string) verdict {
	err := fmt.Errorf("%s hook %q %s", ev, c.Cmd, why)
	if ev == PreToolUse {
		return verdict{decision: Deny, block: true, err: err, message: err.Error(),
			reason: fmt.Sprintf("the PreToolUse hook %q gave an answer that could not be read (%s), so the call is blocked; the hook needs fixing", c.Cmd, why)}
	}
	return failed(err)
}

// answer interprets a hook's JSON output.
func answer(ev Event, c *Command, out output) verdict {
	var v verdict
	var errs []error
	spec := out.Specific
	if spec != nil && spec.HookEventName != "" && spec.HookEventName != string(ev) {
		errs = append(errs, fmt.Errorf("%s hook %q answered with hookSpecificOutput for %q; it is ignored", ev, c.Cmd, spec.HookEventName))
		if ev != PreToolUse || spec.PermissionDecision != string(Deny) {
			spec = nil // a deny is honoured whatever the label says
		}
	}
	switch ev {
	case PreToolUse:
		v = preToolUse(c, out, spec)
	case PermissionRequest:
		v = permissionRequest(c, out, spec)
	case PreModelSwitch:
		v = preModelSwitch(c, out, spec)
	default:
		switch out.Decision {
		case "", "approve":
		case "block":
			reason := out.Reason
			if reason == "" {
				reason = fmt.Sprintf("the %s hook %q blocked without saying why", ev, c.Cmd)
			}
			v = blocking(ev, reason)
		default:
			errs = append(errs, fmt.Errorf(`%s hook %q returned decision %q; use "block" or leave it out`, ev, c.Cmd, out.Decision))
		}
		if spec != nil && spec.AdditionalContext != "" {
			switch ev {
			case PostToolUse, PostToolUseFailure, PostToolBatch, UserPromptSubmit, SubagentStart, SessionStart,
				UserPromptExpansion:
				v.context = strings.TrimSpace(strings.Join([]string{v.context, spec.AdditionalContext}, "\n"))
			}
		}
	}
	if out.Continue != nil && !*out.Continue {
		v.stop, v.stopReason = true, out.StopReason
	}
	if out.SystemMessage != "" {
		v.message = strings.TrimSpace(strings.Join([]string{v.message, out.SystemMessage}, "\n"))
	}
	if err := errors.Join(append(errs, v.err)...); err != nil {
		v.err = err
		if v.message == "" {
			v.message = err.Error()
		}
	}
	return v
}

// preModelSwitch reads a PreModelSwitch answer: permissionDecision "deny"
// or "ask" (no one is asked during a switch, so ask refuses, as in a
// headless Claude Code) or the decision "block" cancels the switch;
// "allow" and no answer let it go ahead.
func preModelSwitch(c *Command, out output, spec *specificOutput) verdict {
	d, reason := out.Decision, out.Reason
	if spec != nil && spec.PermissionDecision != "" {
		d, reason = spec.PermissionDecision, spec.PermissionDecisionReason
	}
	switch d {
	case "", "allow", "approve":
		return verdict{}
	case "deny", "ask", "block":
		if reason == "" {
			reason = fmt.Sprintf("the PreModelSwitch hook %q refused the switch without saying why", c.Cmd)
		}
		return verdict{block: true, reason: reason}
	}
	return failed(fmt.Errorf(`PreModelSwitch hook %q returned %q; use permissionDecision "allow", "deny" or "ask"`, c.Cmd, d))
}

// preToolUse reads a PreToolUse answer: hookSpecificOutput's
// permissionDecision and the legacy decision "approve"/"block". When both
// are given the stronger wins; a value that is not understood denies.
func preToolUse(c *Command, out output, spec *specificOutput) verdict {
	var v verdict
	deny := func(reason string, err error) verdict {
		return verdict{decision: Deny, block: true, reason: reason, err: err}
	}
	legacy := NoDecision
	switch out.Decision {
	case "":
	case "approve":
		legacy = Allow
	case "block":
		legacy = Deny
	default:
		err := fmt.Errorf(`PreToolUse hook %q returned decision %q; use "approve" or "block"`, c.Cmd, out.Decision)
		return deny(fmt.Sprintf("the PreToolUse hook %q gave an answer that is not understood (decision %q), so the call is blocked", c.Cmd, out.Decision), err)
	}
	v.decision, v.reason = legacy, out.Reason
	if spec != nil {
		d := Decision(spec.PermissionDecision)
		switch d {
		case NoDecision, Allow, Ask, Deny:
		case "defer":
			d = Ask // let the permission gate decide
		default:
			err := fmt.Errorf(`PreToolUse hook %q returned permissionDecision %q; use "allow", "deny" or "ask"`, c.Cmd, d)
			return deny(fmt.Sprintf("the PreToolUse hook %q gave an answer that is not understood (permissionDecision %q), so the call is blocked", c.Cmd, d), err)
		}
		if d.rank() >= v.decision.rank() && d != NoDecision {
			v.decision, v.reason = d, spec.PermissionDecisionReason
		}
		if in := bytes.TrimSpace(spec.UpdatedInput); len(in) > 0 && !bytes.Equal(in, []byte("null")) {
			if in[0] != '{' {
				err := fmt.Errorf("PreToolUse hook %q returned updatedInput that is %s, not an object", c.Cmd, kindOf(in))
				return deny(fmt.Sprintf("the PreToolUse hook %q rewrote the input into %s, so the call is blocked", c.Cmd, kindOf(in)), err)
			}
			v.input = json.RawMessage(in)
		}
	}
	if v.decision == Deny {
		if v.reason == "" {
			v.reason = fmt.Sprintf("denied by the PreToolUse hook %q", c.Cmd)
		}
		v.block, v.input = true, nil
	}
	return v
}

// permissionRequest reads a PermissionRequest answer:
// hookSpecificOutput.decision {behavior, updatedInput, message,
// interrupt}, or the legacy decision "block". An answer that is not
// understood decides nothing (the prompt goes ahead as if no hook had
// spoken) and is reported; it never allows.
func permissionRequest(c *Command, out output, spec *specificOutput) verdict {
	var v verdict
	if out.Decision == "block" {
		v = verdict{decision: Deny, block: true, reason: out.Reason}
	}
	if spec == nil || spec.Decision == nil {
		return v
	}
	d := spec.Decision
	switch d.Behavior {
	case string(Allow):
		if in := bytes.TrimSpace(d.UpdatedInput); len(in) > 0 && !bytes.Equal(in, []byte("null")) {
			if in[0] != '{' {
				return verdict{err: fmt.Errorf("PermissionRequest hook %q returned updatedInput that is %s, not an object; it is ignored", c.Cmd, kindOf(in))}
			}
			v.input = json.RawMessage(in)
		}
		if v.decision != Deny {
			v.decision = Allow
		}
	case string(Deny):
		v = verdict{decision: Deny, block: true, reason: d.Message, stop: d.Interrupt}
	default:
		return verdict{err: fmt.Errorf(`PermissionRequest hook %q returned decision.behavior %q; use "allow" or "deny"`, c.Cmd, d.Behavior)}
	}
	if v.decision == Deny && v.reason == "" {
		v.reason = fmt.Sprintf("denied by the PermissionRequest hook %q", c.Cmd)
	}
	return v
}
