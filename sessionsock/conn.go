package sessionsock

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime/debug"
	"time"

	"github.com/cohort-dev/cohort/internal/clip"
	"github.com/cohort-dev/cohort/mailbox"
)

// Peer is the process that sent a message, as the kernel reports it.
type Peer struct {
	UID int
	PID int // 0 where the platform does not say (macOS, FreeBSD)
}

type peerKey struct{}

// PeerFrom returns the sender of the message a Handler was called for.
func PeerFrom(ctx context.Context) (Peer, bool) {
	p, ok := ctx.Value(peerKey{}).(Peer)
	return p, ok
}

// reply is the one JSON line answering each message.
type reply struct {
	OK    bool   `json:"ok"`
	ID    string `json:"id,omitempty"`
	Error string `json:"error,omitempty"`
}

// Reply limits: errors are cut so a reply always fits in maxReply.
const (
	maxReplyError = 2048
	maxReply      = 8 << 10
	writeTimeout  = 10 * time.Second
)

func writeReply(c net.Conn, r reply) error {
	r.Error = clip.String(r.Error, maxReplyError)
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	_, err = c.Write(append(line, '\n'))
	return err
}

// serve reads messages from c until the peer stops, the connection idles
// out or the Listener closes, answering each with one reply line.
func (l *Listener) serve(ctx context.Context, c *net.UnixConn) {
	defer l.wg.Done()
	defer l.untrack(c)
	peer, err := peerCred(c)
	if err != nil || !l.cfg.allowUID(peer.UID) {
		msg := fmt.Sprintf("refused: peer uid %d is not the session owner", peer.UID)
		if err != nil {
			msg = fmt.Sprintf("refused: cannot read the peer's credentials: %v", err)
		}
		l.log.Warn("session socket peer refused", "path", l.path, "uid", peer.UID, "pid", peer.PID, "err", err)
		l.refuse(c, msg)
		return
	}
	ctx = context.WithValue(ctx, peerKey{}, peer)
	br := bufio.NewReaderSize(c, 64<<10)
	for {
		_ = c.SetReadDeadline(time.Now().Add(l.cfg.IdleTimeout))
		line, tooLong, err := readLine(br, l.cfg.MaxMessageBytes)
		if err != nil {
			if !isClosedConn(err) {
				l.log.Debug("session socket connection ends", "path", l.path, "err", err)
			}
			return
		}
		var r reply
		switch {
		case tooLong:
			r = reply{Error: fmt.Sprintf("%v: message is larger than %d bytes", mailbox.ErrInvalidMessage, l.cfg.MaxMessageBytes)}
		case len(bytes.TrimSpace(line)) == 0:
			continue // blank lines are keep-alives
		default:
			r = l.handle(ctx, line)
		}
		if !r.OK {
			l.log.Info("session socket message refused", "path", l.path, "id", r.ID, "err", r.Error)
		}
		_ = c.SetWriteDeadline(time.Now().Add(writeTimeout))
		if err := writeReply(c, r); err != nil {
			l.log.Debug("session socket reply not sent", "path", l.path, "id", r.ID, "err", err)
			return
		}
	}
}

// readLine returns the next line without its newline. A line longer than
// max is consumed up to its newline and reported as tooLong, so the
// connection stays in step. A last line without a newline is an error (the
// peer went away mid-message).
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+1 { // +1: the newline
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		switch {
		case err == nil:
			if tooLong {
				return nil, true, nil
			}
			return bytes.TrimSuffix(line[:len(line)-1], []byte("\r")), false, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && (len(line) > 0 || tooLong):
			return nil, false, io.ErrUnexpectedEOF
		default:
			return nil, false, err
		}
	}
}

// handle decodes, completes, validates and delivers one message.
func (l *Listener) handle(ctx context.Context, line []byte) reply {
	var m mailbox.Message
	if err := json.Unmarshal(line, &m); err != nil {
		return reply{Error: fmt.Sprintf("%v: not a JSON message: %v", mailbox.ErrInvalidMessage, err)}
	}
	var d Delivery
	if err := json.Unmarshal(line, &d); err != nil {
		return reply{ID: validID(m.ID), Error: fmt.Sprintf("%v: its priority is not a string: %v", mailbox.ErrInvalidMessage, err)}
	}
	if err := d.Check(); err != nil {
		return reply{ID: validID(m.ID), Error: fmt.Sprintf("%v: %v", mailbox.ErrInvalidMessage, err)}
	}
	ctx = context.WithValue(ctx, deliveryKey{}, d)
	if m.To == "" {
		m.To = l.cfg.Recipient
	}
	if m.Timestamp.IsZero() {
		m.Timestamp = time.Now()
	}
	if m.ID == "" {
		m.ID = mailbox.NewID(m.Timestamp)
	}
	if err := m.Validate(); err != nil {
		return reply{ID: validID(m.ID), Error: err.Error()}
	}
	if err := l.deliver(ctx, m); err != nil {
		return reply{ID: m.ID, Error: err.Error()}
	}
	return reply{OK: true, ID: m.ID}
}

// validID echoes an id only when it is well-formed.
func validID(id string) string {
	if mailbox.ValidateID(id) != nil {
		return ""
	}
	return id
}

// deliver calls the handler once per id: a message re-sent while it is
// being delivered waits for the first attempt and shares its success; a
// failed attempt is forgotten, so a retry runs the handler again.
func (l *Listener) deliver(ctx context.Context, m mailbox.Message) error {
	for {
		d, first := l.seen.begin(m.ID)
		if first {
			err := l.callHandler(ctx, m)
			l.seen.finish(m.ID, d, err)
			return err
		}
		select {
		case <-d.done:
		case <-ctx.Done():
			return fmt.Errorf("session is shutting down: %w", context.Cause(ctx))
		}
		if d.err == nil {
			return nil
		}
	}
}

// callHandler runs the handler, turning a panic into an error so one bad
// message cannot take the session down.
func (l *Listener) callHandler(ctx context.Context, m mailbox.Message) (err error) {
	defer func() {
		if p := recover(); p != nil {
			l.log.Error("session socket handler panicked", "path", l.path, "id", m.ID, "panic", p, "stack", string(debug.Stack()))
			err = fmt.Errorf("the session failed to deliver the message (handler panic: %v)", p)
		}
	}()
	return l.cfg.Handler(ctx, m)
}
