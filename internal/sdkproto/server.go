package sdkproto

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
	"sync"
	"time"

	"github.com/cohort-dev/cohort"
)

// DefaultPromptTimeout is how long a can_use_tool request waits for the
// host's answer before the call is denied.
const DefaultPromptTimeout = 10 * time.Minute

// maxLine bounds one stdin line (a prompt with a pasted file is large; a
// runaway writer is not).
const maxLine = 64 << 20

// Options configure a server.
type Options struct {
	// Config is the session the command line describes; initialize adds
	// to it.
	Config cohort.Config
	// PermissionPrompts sends every permission prompt to the host as
	// can_use_tool (--permission-prompt-tool stdio).
	PermissionPrompts bool
	// PromptTimeout bounds the wait for the host's answer to can_use_tool
	// (default DefaultPromptTimeout).
	PromptTimeout time.Duration
	// Replay echoes each user message back before its turn
	// (--replay-user-messages).
	Replay bool
}

// Serve runs the protocol until in ends and every queued message has had
// its turn, or ctx ends. It returns an error only when the session could
// not be made (the initialize request was answered with that error first)
// or stdin could not be read. The caller owns in: a reader blocked on it
// returns when it is closed (at exit, for the CLI's stdin).
func Serve(ctx context.Context, in io.Reader, out io.Writer, o Options) error {
	if o.PromptTimeout <= 0 {
		o.PromptTimeout = DefaultPromptTimeout
	}
	srv := &server{o: o, w: &lineWriter{w: out}, wake: make(chan struct{}, 1), dead: make(chan struct{}),
		log: newAgentLog(), stopFollow: make(chan struct{})}
	srv.host = newHost(srv.w)
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(lines)
		readErr <- readLines(in, lines, stop)
	}()
	driven := make(chan struct{})
	go func() {
		defer close(driven)
		srv.drive(ctx)
	}()
	var failed error
	lineNo := 0
	// While initialize makes the session, control responses are handled
	// at once (the session's SDK-hosted MCP servers answer through them)
	// and every other line is held, in order, until it is ready.
	var held []heldLine
	flush := func() error {
		for len(held) > 0 {
			h := held[0]
			held = held[1:]
			if err := srv.handle(ctx, h.no, h.b); err != nil {
				return err
			}
		}
		return nil
	}
read:
	for {
		var opened <-chan struct{}
		if len(held) > 0 {
			opened = srv.opening
		}
		select {
		case b, ok := <-lines:
			if !ok {
				break read
			}
			lineNo++
			if srv.isOpening() && !isControlResponse(b) {
				held = append(held, heldLine{lineNo, b})
				continue
			}
			if err := srv.handle(ctx, lineNo, b); err != nil {
				failed = err
				break read
			}
		case <-opened:
			if err := flush(); err != nil {
				failed = err
				break read
			}
		case <-srv.dead:
			break read // the session could not be made
		case <-ctx.Done():
			break read
		}
	}
	if failed == nil {
		if failed = srv.awaitOpen(ctx); failed == nil {
			failed = flush()
		}
	}
	srv.endInput()
	<-driven
	close(srv.stopFollow)
	srv.followers.Wait()
	if s := srv.session(); s != nil {
		if err := s.Close(); err != nil && !errors.Is(err, context.Canceled) {
			srv.problem(0, "closing the session: "+err.Error())
		}
	}
	if failed != nil {
		return failed
	}
	select {
	case err := <-readErr:
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read stdin: %w", err)
		}
	default:
	}
	return nil
}

// readLines sends each non-empty line of in until EOF, an error or stop.
func readLines(in io.Reader, lines chan<- []byte, stop <-chan struct{}) error {
	br := bufio.NewReaderSize(in, 64<<10)
	for {
		b, err := readLine(br)
		if len(bytes.TrimSpace(b)) > 0 {
			select {
			case lines <- b:
			case <-stop:
				return nil
			}
		}
		if err != nil {
			return err
		}
	}
}

func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxLine {
			// Skip the rest of the line: what follows it is still read.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			return []byte(`{"type":"__too_long__"}`), err
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, err
		}
	}
}

// server is one protocol session.
type server struct {
	o    Options
	w    *lineWriter
	host *host
	// log keeps the agent tasks' messages (get_task_output); followers
	// are the requests answered from goroutines (a follow waiting for an
	// agent's next message, MCP changes), stopped by stopFollow at the end.
	log        *agentLog
	followers  sync.WaitGroup
	stopFollow chan struct{}

	// opening is closed when the session initialize makes is ready (or
	// could not be made: openErr); nil before initialize.
	opening chan struct{}
	openErr error
	dead    chan struct{} // closed when initialize could not make the session

	mu           sync.Mutex
	s            *cohort.Session
	defaultModel string
	initialized  bool
	queue        []prompt
	inputDone    bool
	wake         chan struct{}
	turns        promptTurns // the prompt of each Run, for rewind_files
	// running orders the Runs of the prompts (drive) and those the
	// session starts itself (woken), so neither finds the other's busy.
	running sync.Mutex
}

// heldLine is a stdin line waiting for the session initialize makes.
type heldLine struct {
	no int
	b  []byte
}

// isOpening reports whether initialize is making the session now.
func (srv *server) isOpening() bool {
	if srv.opening == nil {
		return false
	}
	select {
	case <-srv.opening:
		return false
	default:
		return true
	}
}

// isControlResponse reports whether a line is a control response (read
// cheaply: a line that is not JSON is not one).
func isControlResponse(b []byte) bool {
	var m struct {
		Type string `json:"type"`
	}
	return json.Unmarshal(b, &m) == nil && m.Type == "control_response"
}

// prompt is one user message waiting for its turn.
type prompt struct {
	text string
	line *inbound
}

func (srv *server) session() *cohort.Session {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return srv.s
}

// handle acts on one stdin line. An error ends the protocol (the session
// could not be made); bad lines are reported and skipped.
func (srv *server) handle(ctx context.Context, lineNo int, b []byte) error {
	var m inbound
	if err := json.Unmarshal(b, &m); err != nil {
		srv.problem(lineNo, fmt.Sprintf("not a JSON object (%v); each line must be one JSON message", err))
		return nil
	}
	switch m.Type {
	case "user":
		text, err := promptText(m.Message)
		if err != nil {
			srv.problem(lineNo, err.Error())
			return nil
		}
		if srv.session() == nil {
			if err := srv.open(ctx, nil); err != nil {
				return err
			}
		}
		srv.enqueue(prompt{text: text, line: &m})
	case "control_request":
		return srv.control(ctx, lineNo, &m)
	case "control_response":
		if m.Response == nil {
			srv.problem(lineNo, `a control_response needs "response": {"subtype", "request_id", …}`)
			return nil
		}
		if !srv.host.answer(*m.Response) {
			srv.problem(lineNo, fmt.Sprintf("control_response for request_id %q, which is no request waiting for an answer (answered already, timed out, or never sent)", m.Response.RequestID))
		}
	case "control_cancel_request", "keep_alive", "update_environment_variables":
		// Nothing of ours to cancel: the CLI answers every host request
		// at once. Keep-alives keep nothing here.
	case "__too_long__":
		srv.problem(lineNo, fmt.Sprintf("the line is longer than %d MB and was skipped", maxLine>>20))
	case "":
		srv.problem(lineNo, `the message has no "type"; want user, control_request or control_response`)
	default:
		srv.problem(lineNo, fmt.Sprintf("unknown message type %q; want user, control_request or control_response", m.Type))
	}
	return nil
}

// enqueue queues a user message for its turn.
func (srv *server) enqueue(p prompt) {
	srv.mu.Lock()
	srv.queue = append(srv.queue, p)
	srv.mu.Unlock()
	srv.signal()
}

func (srv *server) signal() {
	select {
	case srv.wake <- struct{}{}:
	default:
	}
}

// endInput marks the end of stdin: permission prompts still waiting are
// denied, and the driver stops once the queue is empty.
func (srv *server) endInput() {
	srv.mu.Lock()
	srv.inputDone = true
	srv.mu.Unlock()
	srv.host.closeInput()
	srv.signal()
}

// next waits for the next user message; false when input has ended and
// none is left, or ctx ends.
func (srv *server) next(ctx context.Context) (prompt, bool) {
	for {
		srv.mu.Lock()
		if len(srv.queue) > 0 {
			p := srv.queue[0]
			srv.queue = srv.queue[1:]
			srv.mu.Unlock()
			return p, true
		}
		done := srv.inputDone
		srv.mu.Unlock()
		if done {
			return prompt{}, false
		}
		select {
		case <-srv.wake:
		case <-ctx.Done():
			return prompt{}, false
		}
	}
}

// queued is the uuids of the messages waiting for a turn.
func (srv *server) queued() []string {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	out := []string{}
	for _, p := range srv.queue {
		if p.line.UUID != "" {
			out = append(out, p.line.UUID)
		}
	}
	return out
}

// drive runs the queued messages, one Run each, writing every event.
func (srv *server) drive(ctx context.Context) {
	for {
		p, ok := srv.next(ctx)
		if !ok {
			return
		}
		s := srv.session()
		if srv.o.Replay {
			id := p.line.UUID
			if id == "" {
				id = newID()
			}
			srv.w.write(replay{Type: "user", Message: p.line.Message, ParentToolUseID: p.line.ParentToolUseID,
				SessionID: s.ID(), UUID: id, IsReplay: true})
		}
		srv.turns.started(p.line.UUID)
		if strings.TrimSpace(p.text) == "/compact" {
			srv.compact(ctx, s)
			continue
		}
		srv.running.Lock()
		for ev, err := range s.Run(ctx, p.text) {
			if err != nil {
				srv.problem(0, "the turn could not run: "+err.Error())
				break
			}
			srv.writeEvent(ev)
		}
		srv.running.Unlock()
	}
}

// woken writes the events of a turn the session started itself: a
// message from another session reached its idle lead (cohort.Config.Wake),
// as Claude Code's SDK sessions take one. The host reads it as it reads a
// prompt's turn, ending with a result line. ErrBusy means a prompt's Run
// began first and reads the message: nothing to write.
func (srv *server) woken(run iter.Seq2[cohort.Event, error]) {
	srv.running.Lock()
	defer srv.running.Unlock()
	for ev, err := range run {
		if err != nil {
			if !errors.Is(err, cohort.ErrBusy) && !errors.Is(err, cohort.ErrClosed) {
				srv.problem(0, "the turn a message started could not run: "+err.Error())
			}
			return
		}
		if ev.Type == cohort.EventResult && ev.NumTurns == 0 && !ev.IsError {
			return // a prompt's Run read the message between the wake and this Run
		}
		srv.writeEvent(ev)
	}
}

// compact is the prompt "/compact", which compacts the conversation as
// Claude Code's SDK mode does (a local command: no model turn, a result
// line naming it).
func (srv *server) compact(ctx context.Context, s *cohort.Session) {
	err := s.Compact(ctx)
	res := map[string]any{"type": "result", "subtype": "success", "is_error": err != nil, "result": "",
		"local_command": "compact", "num_turns": 0, "session_id": s.ID(), "uuid": newID()}
	if err != nil {
		res["subtype"], res["result"] = "error_during_execution", "compact: "+err.Error()
	}
	srv.w.write(res)
}

// writeEvent writes one of the session's events and notes what it says
// about agent tasks.
func (srv *server) writeEvent(ev cohort.Event) {
	line, err := json.Marshal(ev)
	if err != nil {
		srv.problem(0, "encode an event: "+err.Error())
		return
	}
	srv.log.note(ev, line)
	srv.w.writeRaw(line)
}

// problem writes a protocol_error line.
func (srv *server) problem(lineNo int, msg string) {
	id := ""
	if s := srv.session(); s != nil {
		id = s.ID()
	}
	if lineNo > 0 {
		msg = fmt.Sprintf("stdin line %d: %s", lineNo, msg)
	}
	srv.w.write(protocolError{Type: "system", Subtype: "protocol_error", Line: lineNo, Error: msg, SessionID: id, UUID: newID()})
}

// lineWriter writes one JSON value per line, whole, from any goroutine.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (lw *lineWriter) write(v any) {
	data, err := json.Marshal(v)
	if err != nil {
		data, _ = json.Marshal(protocolError{Type: "system", Subtype: "protocol_error", Error: "encode a line: " + err.Error(), UUID: newID()})
	}
	lw.writeRaw(data)
}

// writeRaw writes one encoded JSON value as a line.
func (lw *lineWriter) writeRaw(data []byte) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.w.Write(append(data, '\n'))
}
