package attach

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"reflect"
	"strconv"
	"sync"
	"time"

	"github.com/cohort-dev/cohort"
)

// agentsEvery is how often the server looks whether the agent list
// changed while a client is attached.
const agentsEvery = 200 * time.Millisecond

// Server is a background session's control socket.
type Server struct {
	s  *cohort.Session
	ln *net.UnixListener
	// OnEvent sees every event of the runs clients start (the session's
	// record keeping).
	onEvent func(cohort.Event)

	mu      sync.Mutex
	client  *serverConn
	pending map[string]*waiting
	next    int

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

type waiting struct {
	req   cohort.PermissionRequest
	reply chan cohort.Decision
}

// NewServer returns a server whose permission requests (CanUseTool) wait
// for a client; Serve starts it on a session.
func NewServer() *Server {
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{pending: map[string]*waiting{}, ctx: ctx, cancel: cancel}
}

// Serve listens on path for s; onEvent sees the events of client runs.
func (sv *Server) Serve(path string, s *cohort.Session, onEvent func(cohort.Event)) error {
	_ = os.Remove(path) // a socket left by a killed session of this id
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return fmt.Errorf("control socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return fmt.Errorf("control socket: %w", err)
	}
	sv.s, sv.ln, sv.onEvent = s, ln, onEvent
	sv.wg.Add(1)
	go sv.accept()
	return nil
}

// Close stops serving and waits for the server's goroutines.
func (sv *Server) Close() error {
	sv.cancel()
	var err error
	if sv.ln != nil {
		err = sv.ln.Close()
	}
	sv.mu.Lock()
	if sv.client != nil {
		sv.client.c.Close()
	}
	sv.mu.Unlock()
	sv.wg.Wait()
	return err
}

// CanUseTool is the session's Config.CanUseTool: the request waits for
// an attached client's answer, or for ctx (the session stopping).
func (sv *Server) CanUseTool(ctx context.Context, req cohort.PermissionRequest) (cohort.Decision, error) {
	sv.mu.Lock()
	sv.next++
	id := strconv.Itoa(sv.next)
	w := &waiting{req: req, reply: make(chan cohort.Decision, 1)}
	sv.pending[id] = w
	c := sv.client
	sv.mu.Unlock()
	defer func() {
		sv.mu.Lock()
		delete(sv.pending, id)
		sv.mu.Unlock()
	}()
	if c != nil {
		c.send(message{Type: "permission", ID: id, Request: &req})
	}
	select {
	case d := <-w.reply:
		return d, nil
	case <-ctx.Done():
		return cohort.Decision{}, context.Cause(ctx)
	case <-sv.ctx.Done():
		return cohort.Decision{}, errors.New("the session's control socket closed")
	}
}

// Waiting reports how many permission requests wait.
func (sv *Server) Waiting() int {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	return len(sv.pending)
}

func (sv *Server) accept() {
	defer sv.wg.Done()
	for {
		c, err := sv.ln.AcceptUnix()
		if err != nil {
			return
		}
		sv.mu.Lock()
		busy := sv.client != nil
		sc := &serverConn{sv: sv, c: c, enc: make(chan []byte, 256)}
		if !busy {
			sv.client = sc
		}
		sv.mu.Unlock()
		if busy {
			data, _ := encode(message{Type: "hello", Error: "another terminal is attached to this session"})
			_ = c.SetWriteDeadline(time.Now().Add(time.Second))
			_, _ = c.Write(data)
			c.Close()
			continue
		}
		sv.wg.Add(1)
		go sc.serve()
	}
}

// serverConn is the attached client.
type serverConn struct {
	sv  *Server
	c   *net.UnixConn
	enc chan []byte
}

// send queues m for the client; a client that cannot keep up loses it.
func (sc *serverConn) send(m message) {
	data, err := encode(m)
	if err != nil {
		return
	}
	select {
	case sc.enc <- data:
	default:
	}
}

func (sc *serverConn) serve() {
	defer sc.sv.wg.Done()
	ctx, cancel := context.WithCancel(sc.sv.ctx)
	// hello is queued before the agents' pusher starts: the client takes
	// the first line for it.
	s := sc.sv.s
	sc.send(message{Type: "hello", SessionID: s.ID(), Model: s.Model(), Mode: s.PermissionMode()})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); sc.write(ctx) }()
	go func() { defer wg.Done(); sc.pushAgents(ctx) }()
	sc.sv.mu.Lock()
	for id, w := range sc.sv.pending {
		sc.send(message{Type: "permission", ID: id, Request: &w.req})
	}
	sc.sv.mu.Unlock()
	sc.read(ctx, &wg)
	cancel()
	sc.c.Close()
	wg.Wait()
	sc.sv.mu.Lock()
	if sc.sv.client == sc {
		sc.sv.client = nil
	}
	sc.sv.mu.Unlock()
}

func (sc *serverConn) write(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case data := <-sc.enc:
			_ = sc.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
			if _, err := sc.c.Write(data); err != nil {
				sc.c.Close()
				return
			}
		}
	}
}

func (sc *serverConn) pushAgents(ctx context.Context) {
	t := time.NewTicker(agentsEvery)
	defer t.Stop()
	var last []cohort.AgentInfo
	for first := true; ; first = false {
		if a := sc.sv.s.Agents(); first || !reflect.DeepEqual(a, last) {
			last = a
			sc.send(message{Type: "agents", Agents: a})
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// read handles the client's calls until it leaves; runs it started are
// waited for (their goroutines join wg).
func (sc *serverConn) read(ctx context.Context, wg *sync.WaitGroup) {
	br := bufio.NewReader(sc.c)
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return
		}
		var cl call
		if err := json.Unmarshal(line, &cl); err != nil {
			sc.send(message{Type: "reply", Error: "not a call: " + err.Error()})
			continue
		}
		if cl.Op == "run" {
			wg.Add(1)
			go func() { defer wg.Done(); sc.run(ctx, cl) }()
			continue
		}
		sc.send(message{Type: "reply", Seq: cl.Seq, Error: errText(sc.do(ctx, cl))})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// run runs a prompt for the client, its events to the client and to
// onEvent, and ends with an end message.
func (sc *serverConn) run(ctx context.Context, cl call) {
	var runErr error
	for ev, err := range sc.sv.s.Run(ctx, cl.Text) {
		if err != nil {
			runErr = err
			break
		}
		if sc.sv.onEvent != nil {
			sc.sv.onEvent(ev)
		}
		we := wireEvent(ev)
		sc.send(message{Type: "event", Event: &we})
	}
	sc.send(message{Type: "end", Seq: cl.Seq, Error: errText(runErr)})
}

// do runs one call other than run.
func (sc *serverConn) do(ctx context.Context, cl call) error {
	s := sc.sv.s
	switch cl.Op {
	case "decide":
		sc.sv.mu.Lock()
		w := sc.sv.pending[cl.ID]
		sc.sv.mu.Unlock()
		if w == nil || cl.Decision == nil {
			return fmt.Errorf("no permission request %q waits", cl.ID)
		}
		d := *cl.Decision
		if string(d.UpdatedInput) == "null" { // JSON's word for none
			d.UpdatedInput = nil
		}
		select {
		case w.reply <- d:
		default:
		}
		return nil
	case "send":
		return s.Send(cl.Text)
	case "interrupt":
		return s.Interrupt()
	case "mode":
		return s.SetPermissionMode(cl.Text)
	case "model":
		return s.SetModelFrom(cl.Text, cmp.Or(cl.Source, "sdk"))
	case "stop":
		return s.StopAgent(cl.ID)
	case "background":
		return s.Background(cl.ID)
	case "message":
		return s.Message(cl.ID, cl.Text)
	case "compact":
		return s.Compact(ctx)
	case "clear":
		return s.Clear()
	}
	return fmt.Errorf("unknown call %q", cl.Op)
}
