package assemble

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/bgsession"
	"github.com/cohort-dev/cohort/bridge"
	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/remote"
	"github.com/cohort-dev/cohort/task"
)

// bridgeWait bounds the bridge's connection at start.
const bridgeWait = 10 * time.Second

// sessionBridge is the session's end of bridge: addresses (package
// bridge), opened in the background when the session has a NATS server,
// so a server that is down delays nothing; a bridge: send then says why
// there is none.
type sessionBridge struct {
	ready chan struct{} // closed once b or err is set
	b     *bridge.Bridge
	err   error
	close func()
}

// openBridge lists the session on its NATS server and takes messages from
// other sessions there: the person's own (package bridge's doc) at once,
// any other held for a person's approval (hold.go). personStarted says no
// session is among this process's ancestors (sessionorigin.Detect); a
// remote job's session is never the person's.
func (s *Session) openBridge(personStarted bool) {
	if s.Remote.NATS.URL == "" {
		return
	}
	sb := &sessionBridge{ready: make(chan struct{})}
	s.bridge = sb
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(sb.ready)
		sb.b, sb.close, sb.err = s.dialBridge(ctx, personStarted && !s.Disposable)
		if sb.err != nil {
			s.logf("bridge: %v", sb.err)
		}
	})
	s.closers = append(s.closers, func() {
		cancel()
		wg.Wait()
		if sb.close != nil {
			sb.close()
		}
	})
}

func (s *Session) dialBridge(ctx context.Context, personStarted bool) (*bridge.Bridge, func(), error) {
	ctx, cancel := context.WithTimeout(ctx, bridgeWait)
	defer cancel()
	cfg := s.Remote.NATS
	cfg.Name = "cohort session " + s.id
	nc, err := remote.Connect(ctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("the NATS server %s cannot be reached: %w; bridge: addresses do not work in this session", cfg.URL, err)
	}
	key, err := remote.LoadOrCreateKey(filepath.Join(s.Process.Paths.CohortHome, "remote", "lead.key"))
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	host, _ := os.Hostname()
	b, err := bridge.Open(ctx, bridge.Config{Conn: nc, Prefix: cfg.Prefix, SessionID: s.id, Name: s.ownName(), Host: host,
		Key: key, Receive: s.receiveBridge, PersonStarted: personStarted,
		OnProblem: func(subject string, err error) { s.logf("bridge: refused a message on %s: %v", subject, err) }})
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return b, func() { b.Close(); nc.Close() }, nil
}

// ownName is this session's name when it is a named background session.
func (s *Session) ownName() string {
	if _, err := os.Stat(filepath.Join(s.Process.Paths.CohortHome, "bg")); err != nil {
		return ""
	}
	reg, err := bgsession.Open(s.Process.Paths.CohortHome)
	if err != nil {
		return ""
	}
	recs, _ := reg.List()
	for _, r := range recs {
		if r.SessionID == s.id {
			return r.Name
		}
	}
	return ""
}

// bridgeSend is teammate.LeadConfig.Bridge: nil without a NATS server.
func (s *Session) bridgeSend() func(ctx context.Context, to string, m mailbox.Message) (string, string, error) {
	if s.Remote.NATS.URL == "" {
		return nil
	}
	return func(ctx context.Context, to string, m mailbox.Message) (string, string, error) {
		sb := s.bridge
		select {
		case <-sb.ready:
		case <-ctx.Done():
			return "", "", ctx.Err()
		}
		if sb.err != nil {
			return "", "", sb.err
		}
		target, sent, err := sb.b.Send(ctx, to, m)
		return target.Label(), sent.ID, err
	}
}

// bridgeReason is what a person is told of a message that came over the
// bridge.
const bridgeReason = "A Cohort session on another machine (through the NATS server) sent this message to this session's lead; it reaches the lead only if you approve it."

// receiveBridge takes a checked message from another session: the
// person's own (a session of this home its person started) is queued as
// a uds: message from such a session is; any other, like a uds: message
// from a session the person did not start, waits for a person's decision,
// and is refused when nobody can decide.
func (s *Session) receiveBridge(_ context.Context, m mailbox.Message, own bool) error {
	item := task.Item{Kind: task.ItemTeammateMessage, Text: mailbox.Render(m), From: m.From}
	if own {
		return s.enqueueInbound(item, "", "")
	}
	if !s.personCanDecide() {
		return errNobodyToApprove
	}
	s.held.Hold(heldMessage{msg: m, item: item, reason: bridgeReason})
	return nil
}
