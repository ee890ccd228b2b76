package jsmail

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/natstest"
	"github.com/cohort-dev/cohort/mailbox"

	"github.com/nats-io/nats.go"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(envHelper) == "writer" {
		os.Exit(writerMain())
	}
	goleak.VerifyTestMain(m)
}

// problems collects what a Transport reports; wait blocks until n have
// come.
type problems struct {
	mu   sync.Mutex
	list []mailbox.Problem
	more chan struct{}
}

func newProblems() *problems { return &problems{more: make(chan struct{}, 1)} }

func (p *problems) add(pr mailbox.Problem) {
	p.mu.Lock()
	p.list = append(p.list, pr)
	p.mu.Unlock()
	select {
	case p.more <- struct{}{}:
	default:
	}
}

func (p *problems) all() []mailbox.Problem {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]mailbox.Problem(nil), p.list...)
}

func (p *problems) wait(t *testing.T, n int) []mailbox.Problem {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for {
		if got := p.all(); len(got) >= n {
			return got
		}
		select {
		case <-p.more:
		case <-ctx.Done():
			t.Fatalf("waited for %d problem reports, got %v", n, p.all())
		}
	}
}

func newKey(t testing.TB) ed25519.PrivateKey {
	t.Helper()
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// connect opens a NATS connection closed when the test ends.
func connect(t testing.TB, url string) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(url, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// fixture is a team "t" on an embedded server whose keys own every name
// in speakers, with the given inboxes registered.
type fixture struct {
	srv  *natstest.Server
	nc   *nats.Conn
	tr   *Transport
	keys *Keys
	pr   *problems
}

func newFixture(t *testing.T, cfg Config, speakers []string, inboxes ...string) *fixture {
	t.Helper()
	srv := natstest.Start(t)
	f := &fixture{srv: srv, nc: connect(t, srv.URL()), keys: NewKeys(), pr: newProblems()}
	for _, s := range speakers {
		if err := f.keys.Own(s, newKey(t)); err != nil {
			t.Fatal(err)
		}
	}
	cfg.Conn, cfg.Team, cfg.Keys, cfg.OnProblem = f.nc, "t", f.keys, f.pr.add
	if cfg.StateDir == "" {
		cfg.StateDir = t.TempDir() // the members' machine: one for the fixture
	}
	tr, err := Open(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.tr = tr
	for _, a := range inboxes {
		if err := tr.Register(t.Context(), a); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f *fixture) open(t *testing.T, agent string) mailbox.Inbox {
	t.Helper()
	in, err := f.tr.OpenInbox(t.Context(), agent)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close() })
	return in
}

func (f *fixture) send(t *testing.T, m mailbox.Message) mailbox.Message {
	t.Helper()
	m, err := f.tr.Append(t.Context(), m)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// receive waits for n messages on in.
func receive(t *testing.T, in mailbox.Inbox, n int) []mailbox.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	var out []mailbox.Message
	for len(out) < n {
		msgs, err := in.Receive(ctx)
		if err != nil {
			t.Fatalf("after %d of %d messages: %v", len(out), n, err)
		}
		out = append(out, msgs...)
	}
	return out
}

func ids(msgs []mailbox.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.ID
	}
	return out
}
