package sessionsock

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/cohort-dev/cohort/internal/clip"
	"github.com/cohort-dev/cohort/mailbox"
)

// Send delivers m to the session listening on path and waits for its
// acknowledgement. An empty ID or Timestamp is filled in, and the id is
// returned; re-sending with the same id is safe (the listener acknowledges
// a repeat without delivering it again). An empty To is left for the
// listener, which fills in its lead. ctx bounds the whole exchange.
//
// Errors: ErrNoSession when nothing listens on path, ErrRefused when the
// peer answered no (its reason is in the message) or belongs to another
// user, the context's error when it ended first.
func Send(ctx context.Context, path string, m mailbox.Message) (string, error) {
	return SendWith(ctx, path, m, Delivery{})
}

// SendWith is Send with a Delivery (a priority) the receiver reads with
// DeliveryFrom. A Delivery that fails Check is refused before connecting.
func SendWith(ctx context.Context, path string, m mailbox.Message, d Delivery) (string, error) {
	if err := d.Check(); err != nil {
		return "", fmt.Errorf("send to %s: %w", path, err)
	}
	uid := os.Geteuid()
	return send(ctx, path, m, d, func(peer int) bool { return peer == uid })
}

func send(ctx context.Context, path string, m mailbox.Message, d Delivery, allowUID func(int) bool) (string, error) {
	if m.Timestamp.IsZero() {
		m.Timestamp = time.Now()
	}
	if m.ID == "" {
		m.ID = mailbox.NewID(m.Timestamp)
	}
	check := m
	if check.To == "" {
		check.To = DefaultRecipient
	}
	if err := check.Validate(); err != nil {
		return "", fmt.Errorf("send to %s: %w", path, err)
	}
	if err := checkLen(path); err != nil {
		return "", err
	}
	line, err := json.Marshal(m)
	if err == nil {
		line, err = withDelivery(line, d)
	}
	if err != nil {
		return "", fmt.Errorf("send to %s: %w", path, err)
	}
	c, err := dial(ctx, path)
	if err != nil {
		return "", err
	}
	defer c.Close()
	// The peer is checked too: a message must not go to a socket another
	// user planted.
	peer, err := peerCred(c)
	if err != nil {
		return "", fmt.Errorf("%w: cannot tell who listens on %s: %v", ErrRefused, path, err)
	}
	if !allowUID(peer.UID) {
		return "", fmt.Errorf("%w: %s belongs to uid %d, not to us", ErrRefused, path, peer.UID)
	}
	r, err := exchange(ctx, c, line)
	if err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			// Our only deadlines are ctx's: its timer may fire a moment
			// after the socket's.
			<-ctx.Done()
		}
		if ctx.Err() != nil {
			return "", fmt.Errorf("send to %s: %w", path, context.Cause(ctx))
		}
		return "", fmt.Errorf("send to %s: no acknowledgement: %w", path, err)
	}
	if !r.OK {
		return "", fmt.Errorf("%w by %s: %s", ErrRefused, path, r.Error)
	}
	if r.ID != m.ID {
		return "", fmt.Errorf("send to %s: acknowledgement for %q, but %q was sent", path, clip.String(r.ID, 60), m.ID)
	}
	return m.ID, nil
}

// dial connects to path, naming the failures a caller can act on.
func dial(ctx context.Context, path string) (*net.UnixConn, error) {
	c, err := new(net.Dialer).DialContext(ctx, "unix", path)
	switch {
	case err == nil:
		return c.(*net.UnixConn), nil
	case errors.Is(err, syscall.ENOENT):
		return nil, fmt.Errorf("%w: no socket at %s: that session is not running", ErrNoSession, path)
	case errors.Is(err, syscall.ECONNREFUSED):
		return nil, fmt.Errorf("%w: nothing listens on %s: that session has ended", ErrNoSession, path)
	case ctx.Err() != nil:
		return nil, fmt.Errorf("connect to %s: %w", path, context.Cause(ctx))
	}
	return nil, fmt.Errorf("connect to %s: %w", path, err)
}

// exchange writes one message line and reads the reply, within ctx.
func exchange(ctx context.Context, c *net.UnixConn, line []byte) (reply, error) {
	if d, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(d)
	}
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	_, werr := c.Write(append(line, '\n'))
	// Even when the write failed the peer may have explained why (a
	// refusal) before it closed: read what is there.
	br := bufio.NewReaderSize(c, 4<<10)
	raw, tooLong, err := readLine(br, maxReply)
	if err != nil || tooLong {
		return reply{}, errors.Join(werr, err, errIf(tooLong, "reply is too long"))
	}
	var r reply
	if err := json.Unmarshal(raw, &r); err != nil {
		return reply{}, fmt.Errorf("reply %q is not JSON: %w", clip.String(string(raw), 80), err)
	}
	if !r.OK && r.Error == "" {
		r.Error = "no reason given"
	}
	return r, nil
}

func errIf(cond bool, msg string) error {
	if cond {
		return errors.New(msg)
	}
	return nil
}

// Live returns the socket paths in dir ($COHORT_HOME/sessions) of the
// sessions that answer now, sorted, leaving out skip (the caller's own).
// A socket nothing listens on (a session that ended without removing it)
// is left out; so is one another user's process owns. Each probe is a
// connect that is closed at once, bounded by ctx.
func Live(ctx context.Context, dir, skip string) ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*.sock"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range paths {
		if p == skip {
			continue
		}
		c, err := dial(ctx, p)
		if err != nil {
			continue
		}
		peer, err := peerCred(c)
		c.Close()
		if err == nil && peer.UID == os.Geteuid() {
			out = append(out, p)
		}
	}
	return out, ctx.Err()
}

// Answers reports whether something listens on path now: a connect,
// closed at once, bounded by ctx. It is false only when nothing does (no
// socket, or one its session left when it died); a connect that fails
// otherwise (ctx ended, too many connections) counts as an answer.
func Answers(ctx context.Context, path string) bool {
	c, err := dial(ctx, path)
	if err != nil {
		return !errors.Is(err, ErrNoSession)
	}
	c.Close()
	return true
}
