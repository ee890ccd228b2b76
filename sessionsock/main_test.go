package sessionsock

import (
	"bufio"
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/mailbox"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// inbox is a Handler that records what it is given.
type inbox struct {
	mu   sync.Mutex
	msgs []mailbox.Message
}

func (b *inbox) handle(_ context.Context, m mailbox.Message) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.msgs = append(b.msgs, m)
	return nil
}

func (b *inbox) all() []mailbox.Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]mailbox.Message(nil), b.msgs...)
}

func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// listen starts a Listener in a fresh directory; cfg.Dir, SessionID and
// Handler get defaults when empty. It is closed when the test ends.
func listen(t *testing.T, cfg Config) (*Listener, *inbox) {
	t.Helper()
	b := &inbox{}
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	if cfg.SessionID == "" {
		cfg.SessionID = "s1"
	}
	if cfg.Handler == nil {
		cfg.Handler = b.handle
	}
	l, err := Listen(testCtx(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return l, b
}

// rawConn is a hand-driven client for protocol tests.
type rawConn struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func dialRaw(t *testing.T, path string) *rawConn {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	return &rawConn{t: t, c: c, br: bufio.NewReader(c)}
}

// roundTrip writes line (a newline is added) and returns the reply line.
func (r *rawConn) roundTrip(line string) string {
	r.t.Helper()
	if _, err := r.c.Write([]byte(line + "\n")); err != nil {
		r.t.Fatal(err)
	}
	return r.read()
}

func (r *rawConn) read() string {
	r.t.Helper()
	s, err := r.br.ReadString('\n')
	if err != nil {
		r.t.Fatalf("reading the reply: %v (got %q)", err, s)
	}
	return s[:len(s)-1]
}
