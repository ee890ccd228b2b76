package host

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// Message types. Cohort sends run, check, list and answer; the host sends
// agent, event and done.
const (
	TypeRun    = "run"    // Run: start a script
	TypeCheck  = "check"  // Check: load a script and report its meta
	TypeList   = "list"   // List: the saved workflows below Roots
	TypeAnswer = "answer" // ID, Answer or Error: an agent call's outcome
	TypeAgent  = "agent"  // ID, Agent: the script called agent()
	TypeEvent  = "event"  // Event: a phase, a log line, an agent starting or ending
	TypeDone   = "done"   // Result, Checked or Saved, or Error: the request is over
)

// Message is one line of the protocol. Type says which other fields are set.
type Message struct {
	Type    string        `json:"type"`
	ID      int64         `json:"id,omitempty"`
	Run     *RunRequest   `json:"run,omitempty"`
	Check   *CheckRequest `json:"check,omitempty"`
	List    *ListRequest  `json:"list,omitempty"`
	Agent   *AgentRequest `json:"agent,omitempty"`
	Answer  *AgentResult  `json:"answer,omitempty"`
	Event   *Event        `json:"event,omitempty"`
	Result  *Result       `json:"result,omitempty"`
	Checked *Checked      `json:"checked,omitempty"`
	Saved   []Saved       `json:"saved,omitempty"`
	Error   string        `json:"error,omitempty"`
}

// RunRequest starts a script. Zero limits take package workflow's defaults.
type RunRequest struct {
	Name        string          `json:"name"`   // the script's file name, for messages
	Source      string          `json:"source"` // the script as written
	Args        json.RawMessage `json:"args,omitempty"`
	Dir         string          `json:"dir,omitempty"` // the run's directory (its journal)
	Resume      bool            `json:"resume,omitempty"`
	Roots       []string        `json:"roots,omitempty"` // where workflow(name) finds saved scripts
	Concurrency int             `json:"concurrency,omitempty"`
	MaxAgents   int             `json:"maxAgents,omitempty"`
	MaxItems    int             `json:"maxItems,omitempty"`
	Budget      float64         `json:"budget,omitempty"`
	Timeout     time.Duration   `json:"timeout,omitempty"`
	CPUSlice    time.Duration   `json:"cpuSlice,omitempty"`
}

// CheckRequest loads a script without running it.
type CheckRequest struct {
	Name   string `json:"name"`
	Source string `json:"source"`
}

// ListRequest lists saved workflows below Roots (a project, then home).
type ListRequest struct {
	Roots []string `json:"roots"`
}

// AgentRequest is one agent() call's inputs.
type AgentRequest struct {
	Prompt    string          `json:"prompt"`
	Label     string          `json:"label,omitempty"`
	Phase     string          `json:"phase,omitempty"`
	Schema    json.RawMessage `json:"schema,omitempty"`
	Model     string          `json:"model,omitempty"`
	Effort    string          `json:"effort,omitempty"`
	Isolation string          `json:"isolation,omitempty"`
	AgentType string          `json:"agentType,omitempty"`
}

// AgentResult is a finished subagent: its final text and what it cost.
type AgentResult struct {
	Text string  `json:"text"`
	Cost float64 `json:"cost,omitempty"` // USD, counted against the run's budget
	// Capped says which spend cap stopped the agent before it did its
	// step: the step is null, and the script's next agent() throws.
	Capped string `json:"capped,omitempty"`
}

// Event is something a run reports while it goes.
type Event struct {
	Kind     string `json:"kind"`               // "phase", "log", "agent_start", "agent_end"
	Text     string `json:"text,omitempty"`     // the phase title, log message or agent label
	Phase    string `json:"phase,omitempty"`    // an agent event's phase
	Seq      int    `json:"seq,omitempty"`      // the agent() call's number, for agent events
	Replayed bool   `json:"replayed,omitempty"` // agent_end served from the journal
}

// Result is a finished run.
type Result struct {
	Value    json.RawMessage `json:"value"`    // the script's return value as JSON (null when undefined)
	Agents   int             `json:"agents"`   // agent() calls made
	Live     int             `json:"live"`     // of which spawned an agent
	Replayed int             `json:"replayed"` // of which were served from the journal
	Cost     float64         `json:"cost"`     // budget spent, replayed steps included
	Phases   []PhaseCost     `json:"phases,omitempty"`
}

// PhaseCost is what one phase's agents cost, in the order phases first
// spent; agents outside any phase are under the empty title.
type PhaseCost struct {
	Title  string  `json:"title"`
	Agents int     `json:"agents"`
	Cost   float64 `json:"cost"`
}

// Meta is a script's `export const meta` literal.
type Meta struct {
	Name        string  `json:"name"`
	Description string  `json:"description"`
	WhenToUse   string  `json:"whenToUse,omitempty"`
	Phases      []Phase `json:"phases,omitempty"`
}

// Phase is one entry of meta.phases.
type Phase struct {
	Title  string `json:"title"`
	Detail string `json:"detail,omitempty"`
	Model  string `json:"model,omitempty"`
}

// Checked is a loaded script: its meta, and how many agent() calls its
// text has (a floor on the agents it runs, for an estimate).
type Checked struct {
	Meta       Meta `json:"meta"`
	AgentCalls int  `json:"agentCalls"`
}

// Saved is a saved workflow: its meta, or why it does not load.
type Saved struct {
	Name  string `json:"name"`
	Path  string `json:"path"`
	Meta  *Meta  `json:"meta,omitempty"`
	Error string `json:"error,omitempty"`
}

// MaxLine bounds one protocol line (a script, an agent's answer).
const MaxLine = 64 << 20

// ErrProtocol marks a line the other side should not have sent.
var ErrProtocol = errors.New("workflow host protocol")

// reader reads and checks the messages one side sends.
type reader struct {
	br   *bufio.Reader
	from string // "cohort" or "the workflow host", for errors
	line int
}

func newReader(r io.Reader, from string) *reader {
	return &reader{br: bufio.NewReaderSize(r, 64<<10), from: from}
}

// next returns the next message; io.EOF at a clean end.
func (r *reader) next() (Message, error) {
	var buf []byte
	for {
		chunk, err := r.br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > MaxLine {
			return Message{}, r.errorf("a line longer than %d bytes", MaxLine)
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF && len(buf) > 0 {
			r.line++
			return Message{}, r.errorf("a line cut off without a newline (the process died mid-write?)")
		}
		if err != nil {
			return Message{}, err
		}
		break
	}
	r.line++
	var m Message
	if err := json.Unmarshal(buf, &m); err != nil {
		return Message{}, r.errorf("not a JSON message: %v", err)
	}
	if err := m.check(); err != nil {
		return Message{}, r.errorf("%v", err)
	}
	return m, nil
}

func (r *reader) errorf(format string, args ...any) error {
	return fmt.Errorf("%w: line %d from %s: %s", ErrProtocol, r.line, r.from, fmt.Sprintf(format, args...))
}

// check tells whether a message has the fields its type needs.
func (m Message) check() error {
	need := func(ok bool, what string) error {
		if !ok {
			return fmt.Errorf("a %q message without %s", m.Type, what)
		}
		return nil
	}
	switch m.Type {
	case TypeRun:
		return need(m.Run != nil, "run")
	case TypeCheck:
		return need(m.Check != nil, "check")
	case TypeList:
		return need(m.List != nil, "list")
	case TypeAnswer:
		return need(m.ID > 0 && (m.Answer != nil || m.Error != ""), "a positive id and an answer or error")
	case TypeAgent:
		return need(m.ID > 0 && m.Agent != nil, "a positive id and agent")
	case TypeEvent:
		return need(m.Event != nil, "event")
	case TypeDone:
		return nil
	case "":
		return errors.New("a message without a type")
	}
	return fmt.Errorf("unknown message type %q", m.Type)
}

// writer sends messages, one Write per line. Safe for concurrent use.
type writer struct {
	mu sync.Mutex
	w  io.Writer
}

// send writes m as one line. HTML characters are not escaped: values
// (a script's return value) reach the model as the script made them.
func (w *writer) send(m Message) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return fmt.Errorf("encode %s message: %w", m.Type, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err := w.w.Write(b.Bytes())
	return err
}
