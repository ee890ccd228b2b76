package cohort

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/bridge"
	"github.com/cohort-dev/cohort/internal/natstest"
	"github.com/cohort-dev/cohort/llm/fakeapi"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestBridgeBetweenTwoSessions: two sessions with homes of their own (two
// machines) on one NATS server. Session A's model sends to bridge:<B's
// id>; B's person is asked (the message names A), approves, and B's model
// reads the message at its turn's next step. A send to a session the
// server does not know is an error that names B.
func TestBridgeBetweenTwoSessions(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	ea := newEnv(t)
	nb := openNewsReader(t, newEnv(t), srv.URL())
	b, g, mu, approved := nb.s, nb.g, &nb.mu, nb.approved

	var results []string
	ea.rt.on("tell the other session", func(r *fakeapi.Request) fakeapi.Reply {
		switch r.Turn() {
		case 0:
			return fakeapi.Reply{Content: []fakeapi.Block{use("SendMessage", map[string]any{"to": "bridge:" + b.ID(), "message": "BUILD-GREEN"})}}
		case 1:
			mu.Lock()
			results = append(results, r.LastUserText())
			mu.Unlock()
			return fakeapi.Reply{Content: []fakeapi.Block{use("SendMessage", map[string]any{"to": "bridge:nobody", "message": "hello?"})}}
		}
		mu.Lock()
		results = append(results, r.LastUserText())
		mu.Unlock()
		return fakeapi.TextReply("done")
	})
	ca := ea.config()
	ca.Remote = RemoteConfig{NATS: srv.URL()}
	ca.CanUseTool = func(context.Context, PermissionRequest) (Decision, error) { return Decision{Allow: true}, nil }
	a := ea.open(ca)
	waitListed(t, srv.URL(), a.ID())

	done := make(chan struct{})
	go func() { defer close(done); collect(t, b, "wait for news") }()
	g.await(t)
	collect(t, a, "tell the other session")
	<-approved
	close(g.open)
	<-done

	mu.Lock()
	defer mu.Unlock()
	if len(results) != 2 || !strings.Contains(results[0], "Message delivered to session "+b.ID()) {
		t.Fatalf("A's send: %q", results)
	}
	if !strings.Contains(results[1], `no live session "nobody"`) || !strings.Contains(results[1], b.ID()) {
		t.Errorf("A's send to an unknown session: %q, want an error naming B (%s)", results[1], b.ID())
	}
	if !strings.Contains(nb.asked, "BUILD-GREEN") || !strings.Contains(nb.asked, a.ID()) {
		t.Errorf("B's person was asked about %q; want the message and A's id", nb.asked)
	}
	if !strings.Contains(nb.saw, "BUILD-GREEN") || !strings.Contains(nb.saw, a.ID()) {
		t.Errorf("B's model read %q; want the message from A", nb.saw)
	}
}

// newsReader is a session waiting for news on a NATS server: its first
// turn waits at g, then its model reads what came meanwhile (saw); what
// its person is asked about a SendMessage is asked, and approved closes
// at the first such question.
type newsReader struct {
	s          *Session
	g          *gate
	mu         sync.Mutex
	saw, asked string
	approved   chan struct{}
	once       sync.Once
}

func openNewsReader(t *testing.T, e *env, url string) *newsReader {
	t.Helper()
	nb := &newsReader{g: newGate(), approved: make(chan struct{})}
	e.rt.on("wait for news", func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			if !nb.g.wait(r) {
				return fakeapi.TextReply("cancelled")
			}
			return fakeapi.Reply{Content: []fakeapi.Block{use("Glob", map[string]any{"pattern": "*.none"})}}
		}
		nb.mu.Lock()
		nb.saw = r.LastUserText()
		nb.mu.Unlock()
		return fakeapi.TextReply("noted")
	})
	cfg := e.config()
	cfg.Remote = RemoteConfig{NATS: url}
	cfg.CanUseTool = func(_ context.Context, req PermissionRequest) (Decision, error) {
		if req.Tool == "SendMessage" {
			nb.mu.Lock()
			nb.asked = string(req.Input)
			nb.mu.Unlock()
			nb.once.Do(func() { close(nb.approved) })
		}
		return Decision{Allow: true}, nil
	}
	nb.s = e.open(cfg)
	waitListed(t, url, nb.s.ID())
	return nb
}

// TestBridgeFromThePersonsOwnSessionIsNotHeld: two sessions of one home
// (the same COHORT_HOME, so the same key), both started by their person,
// on one NATS server. A's message to bridge:<B> reaches B's model without
// B's person being asked, as a uds: message from a session the person
// started does (package bridge's doc has the rule).
func TestBridgeFromThePersonsOwnSessionIsNotHeld(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	e := newEnv(t)
	nb := openNewsReader(t, e, srv.URL())
	b, mu := nb.s, &nb.mu
	var result string
	e.rt.on("tell my other session", func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			return fakeapi.Reply{Content: []fakeapi.Block{use("SendMessage", map[string]any{"to": "bridge:" + b.ID(), "message": "MINE-TOO"})}}
		}
		mu.Lock()
		result = r.LastUserText()
		mu.Unlock()
		return fakeapi.TextReply("done")
	})
	ca := e.config()
	ca.Remote = RemoteConfig{NATS: srv.URL()}
	ca.CanUseTool = func(context.Context, PermissionRequest) (Decision, error) { return Decision{Allow: true}, nil }
	a := e.open(ca)
	waitListed(t, srv.URL(), a.ID())

	done := make(chan struct{})
	go func() { defer close(done); collect(t, b, "wait for news") }()
	nb.g.await(t)
	collect(t, a, "tell my other session")
	close(nb.g.open)
	<-done
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(result, "Message delivered to session "+b.ID()) {
		t.Fatalf("A's send: %q", result)
	}
	if nb.asked != "" {
		t.Errorf("B's person was asked about a message from their own session: %q", nb.asked)
	}
	if !strings.Contains(nb.saw, "MINE-TOO") || !strings.Contains(nb.saw, a.ID()) {
		t.Errorf("B's model read %q; want the message from A", nb.saw)
	}
}

// waitListed waits until session id is in the server's session registry
// (a session opens its bridge in the background).
func waitListed(t *testing.T, url, id string) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	js, _ := jetstream.New(nc)
	var kv jetstream.KeyValue
	for kv == nil {
		kv, err = js.KeyValue(ctx, bridge.Bucket("cohort"))
		if err != nil && ctx.Err() != nil {
			t.Fatalf("no session registry: %v", err)
		}
	}
	w, err := kv.Watch(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	for e := range w.Updates() {
		if e != nil && e.Operation() == jetstream.KeyValuePut {
			return
		}
	}
	t.Fatalf("session %s never listed itself: %v", id, ctx.Err())
}
