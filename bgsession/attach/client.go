package attach

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net"
	"sync"
	"time"

	"github.com/cohort-dev/cohort"
)

// callWait bounds one call's round trip.
const callWait = 30 * time.Second

// Client is an attached terminal's end: the methods of the UI's session,
// carried to the background session.
type Client struct {
	c     net.Conn
	hello message
	ask   func(context.Context, cohort.PermissionRequest) (cohort.Decision, error)

	mu      sync.Mutex
	seq     int
	replies map[int]chan message
	events  chan message // the events and end of the client's run, if one goes
	agents  []cohort.AgentInfo
	closed  bool

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// Dial attaches to the control socket at path. ask answers the permission
// requests the session sends (the UI's dialog).
func Dial(ctx context.Context, path string, ask func(context.Context, cohort.PermissionRequest) (cohort.Decision, error)) (*Client, error) {
	var d net.Dialer
	dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, err := d.DialContext(dctx, "unix", path)
	if err != nil {
		return nil, fmt.Errorf("attach: the session does not answer on %s: %w", path, err)
	}
	br := bufio.NewReader(c)
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, err := br.ReadBytes('\n')
	_ = c.SetReadDeadline(time.Time{})
	var hello message
	if err == nil {
		err = json.Unmarshal(line, &hello)
	}
	if err == nil && hello.Error != "" {
		err = errors.New(hello.Error)
	}
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("attach: %w", err)
	}
	cl := &Client{c: c, hello: hello, ask: ask, replies: map[int]chan message{}}
	cl.ctx, cl.cancel = context.WithCancel(context.Background())
	cl.wg.Add(1)
	go cl.read(br)
	return cl, nil
}

// read dispatches what the server sends until the connection ends.
func (cl *Client) read(br *bufio.Reader) {
	defer cl.wg.Done()
	defer cl.cancel()
	for {
		line, err := br.ReadBytes('\n')
		if err != nil {
			return
		}
		var m message
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		switch m.Type {
		case "reply":
			cl.mu.Lock()
			ch := cl.replies[m.Seq]
			delete(cl.replies, m.Seq)
			cl.mu.Unlock()
			if ch != nil {
				ch <- m
			}
		case "agents":
			cl.mu.Lock()
			cl.agents = m.Agents
			cl.mu.Unlock()
		case "permission":
			cl.wg.Add(1)
			go cl.answer(m)
		case "event", "end":
			cl.mu.Lock()
			ch := cl.events
			cl.mu.Unlock()
			if ch != nil {
				select {
				case ch <- m:
				case <-cl.ctx.Done():
				}
			}
		}
	}
}

// answer asks the UI about a permission request and sends its decision.
func (cl *Client) answer(m message) {
	defer cl.wg.Done()
	d, err := cl.ask(cl.ctx, *m.Request)
	if err != nil {
		return // the UI ended: the request waits for the next client
	}
	_ = cl.call(call{Op: "decide", ID: m.ID, Decision: &d})
}

func (cl *Client) write(c call) error {
	data, err := encode(c)
	if err != nil {
		return err
	}
	_ = cl.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	_, err = cl.c.Write(data)
	return err
}

// call sends c and waits for its reply.
func (cl *Client) call(c call) error {
	cl.mu.Lock()
	cl.seq++
	c.Seq = cl.seq
	ch := make(chan message, 1)
	cl.replies[c.Seq] = ch
	cl.mu.Unlock()
	if err := cl.write(c); err != nil {
		return fmt.Errorf("attach: %w", err)
	}
	t := time.NewTimer(callWait)
	defer t.Stop()
	select {
	case m := <-ch:
		if m.Error != "" {
			return errors.New(m.Error)
		}
		return nil
	case <-cl.ctx.Done():
		return errors.New("attach: the session went away")
	case <-t.C:
		return fmt.Errorf("attach: the session did not answer %s within %s", c.Op, callWait)
	}
}

// ID is the session's id.
func (cl *Client) ID() string { return cl.hello.SessionID }

// Model and Mode are the session's model and permission mode when the
// client attached.
func (cl *Client) Model() string { return cl.hello.Model }
func (cl *Client) Mode() string  { return cl.hello.Mode }

// Run runs prompt on the session and yields its events until the run ends.
func (cl *Client) Run(ctx context.Context, prompt string) iter.Seq2[cohort.Event, error] {
	return func(yield func(cohort.Event, error) bool) {
		ch := make(chan message, 64)
		cl.mu.Lock()
		if cl.events != nil {
			cl.mu.Unlock()
			yield(cohort.Event{}, cohort.ErrBusy)
			return
		}
		cl.events = ch
		cl.seq++
		seq := cl.seq
		cl.mu.Unlock()
		defer func() {
			cl.mu.Lock()
			cl.events = nil
			cl.mu.Unlock()
		}()
		if err := cl.write(call{Seq: seq, Op: "run", Text: prompt}); err != nil {
			yield(cohort.Event{}, fmt.Errorf("attach: %w", err))
			return
		}
		for {
			select {
			case m := <-ch:
				if m.Type == "end" {
					if m.Error != "" {
						yield(cohort.Event{}, errors.New(m.Error))
					}
					return
				}
				if m.Event != nil && !yield(cohort.Event(*m.Event), nil) {
					_ = cl.Interrupt()
					return
				}
			case <-ctx.Done():
				_ = cl.Interrupt()
				return
			case <-cl.ctx.Done():
				yield(cohort.Event{}, errors.New("attach: the session went away"))
				return
			}
		}
	}
}

// Agents is the session's agent list as last pushed.
func (cl *Client) Agents() []cohort.AgentInfo {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.agents
}

// Pending: typed-ahead prompts are the session's; the client shows none.
func (cl *Client) Pending() []cohort.Typed { return nil }

func (cl *Client) Send(text string) error { return cl.call(call{Op: "send", Text: text}) }

// Interrupt interrupts the client's own run; a detaching client leaves
// the session's other work alone.
func (cl *Client) Interrupt() error {
	cl.mu.Lock()
	running := cl.events != nil
	cl.mu.Unlock()
	if !running {
		return nil
	}
	return cl.call(call{Op: "interrupt"})
}

func (cl *Client) SetPermissionMode(mode string) error { return cl.call(call{Op: "mode", Text: mode}) }
func (cl *Client) SetModel(model string) error         { return cl.SetModelFrom(model, "sdk") }
func (cl *Client) SetModelFrom(model, source string) error {
	return cl.call(call{Op: "model", Text: model, Source: source})
}
func (cl *Client) StopAgent(id string) error  { return cl.call(call{Op: "stop", ID: id}) }
func (cl *Client) Background(id string) error { return cl.call(call{Op: "background", ID: id}) }
func (cl *Client) Message(id, text string) error {
	return cl.call(call{Op: "message", ID: id, Text: text})
}
func (cl *Client) Compact(context.Context) error { return cl.call(call{Op: "compact"}) }
func (cl *Client) Clear() error                  { return cl.call(call{Op: "clear"}) }

// Rewind is not carried over the attach socket: the session's own files
// and conversation are rewound where it runs.
func (cl *Client) Rewind(context.Context, cohort.RewindRequest) (*cohort.RewindReport, error) {
	return nil, errors.New("an attached terminal cannot rewind the session: stop it, then run cohort rewind")
}

// Close detaches: the session keeps running.
func (cl *Client) Close() error {
	cl.mu.Lock()
	if cl.closed {
		cl.mu.Unlock()
		return nil
	}
	cl.closed = true
	cl.mu.Unlock()
	err := cl.c.Close()
	cl.cancel()
	cl.wg.Wait()
	return err
}
