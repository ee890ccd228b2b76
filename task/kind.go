package task

import (
	"fmt"
	"io"
)

// Kind names what a task runs. The values are Claude Code's task types, so
// they appear unchanged as task_type in stream-json events.
type Kind string

// Task kinds. Dream, teammate and remote tasks are registered and notified
// like the others; their kind-specific fields live in State.Phase and
// State.Detail.
const (
	KindLocalAgent  Kind = "local_agent"         // a subagent in this process (sync or background)
	KindLocalBash   Kind = "local_bash"          // Bash with run_in_background
	KindRemoteAgent Kind = "remote_agent"        // an agent job run by a NATS worker
	KindTeammate    Kind = "in_process_teammate" // a named team member running in this process
	KindDream       Kind = "dream"               // memory consolidation
	KindWorkflow    Kind = "local_workflow"      // a workflow script's run; its agents are its child tasks
)

// idPrefix is the first character of a task id of each kind.
var idPrefix = map[Kind]byte{
	KindLocalAgent:  'a',
	KindLocalBash:   'b',
	KindRemoteAgent: 'r',
	KindTeammate:    't',
	KindDream:       'd',
	KindWorkflow:    'w',
}

// Valid reports whether k is one of the known kinds.
func (k Kind) Valid() bool { _, ok := idPrefix[k]; return ok }

// IsAgent reports whether tasks of kind k run a model (everything but
// background shells); their notifications carry usage.
func (k Kind) IsAgent() bool { return k.Valid() && k != KindLocalBash }

// Status is a task's place in its state machine:
// running → completed | failed | killed. Terminal states are final.
type Status string

// Task states.
const (
	StatusRunning   Status = "running"
	StatusCompleted Status = "completed"
	StatusFailed    Status = "failed"
	StatusKilled    Status = "killed"
)

// Terminal reports whether s is an end state.
func (s Status) Terminal() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusKilled
}

// eventStatus is the status as Claude Code's stream-json task_notification
// spells it: a killed task is "stopped" there.
func (s Status) eventStatus() string {
	if s == StatusKilled {
		return "stopped"
	}
	return string(s)
}

// transition checks one step of the state machine. The only legal steps are
// from running to a terminal state.
func transition(from, to Status) error {
	if from != StatusRunning {
		return fmt.Errorf("task state %s is final; cannot move to %s", from, to)
	}
	if !to.Terminal() {
		return fmt.Errorf("task state %s cannot move to %s", from, to)
	}
	return nil
}

const idAlphabet = "0123456789abcdefghijklmnopqrstuvwxyz"

// newID returns the kind's prefix followed by eight characters of
// [0-9a-z] drawn from rnd (about 41 bits).
func newID(rnd io.Reader, k Kind) (string, error) {
	var b [8]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return "", fmt.Errorf("task id: read random source: %w", err)
	}
	out := make([]byte, 0, 9)
	out = append(out, idPrefix[k])
	for _, c := range b {
		out = append(out, idAlphabet[int(c)%len(idAlphabet)])
	}
	return string(out), nil
}

// newUUID returns a random (version 4) UUID drawn from rnd.
func newUUID(rnd io.Reader) (string, error) {
	var b [16]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return "", fmt.Errorf("event uuid: read random source: %w", err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}
