package sessionsock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/team"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/sync/errgroup"
)

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	l, b := listen(t, Config{})
	ctx := testCtx(t)
	ts := time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC)
	sent := mailbox.Message{From: "alice@other", Text: "hello\nlead", Timestamp: ts, Color: "blue", Summary: "greeting"}
	id, err := Send(ctx, l.Path(), sent)
	if err != nil {
		t.Fatal(err)
	}
	if mailbox.ValidateID(id) != nil {
		t.Fatalf("Send returned id %q", id)
	}
	want := sent
	want.ID, want.To = id, DefaultRecipient
	if diff := cmp.Diff([]mailbox.Message{want}, b.all()); diff != "" {
		t.Errorf("delivered (-want +got):\n%s", diff)
	}
	if DefaultRecipient != team.LeadName {
		t.Errorf("DefaultRecipient %q is not the lead's name %q", DefaultRecipient, team.LeadName)
	}

	// A structured message with its own id and recipient.
	structured := mailbox.Message{ID: "req-1", From: "bob", To: "carol", Text: `{"type":"shutdown_request"}`,
		Timestamp: ts, Type: "shutdown_request"}
	if id, err := Send(ctx, l.Path(), structured); err != nil || id != "req-1" {
		t.Fatalf("Send = %q, %v", id, err)
	}
	if got := b.all(); len(got) != 2 || !cmp.Equal(got[1], structured) {
		t.Errorf("structured message arrived as %+v", got[len(got)-1])
	}
}

func TestFiles(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "sessions")
	l, _ := listen(t, Config{Dir: dir, SessionID: "abc"})
	if l.Path() != filepath.Join(dir, "abc.sock") {
		t.Errorf("Path = %s", l.Path())
	}
	for path, want := range map[string]os.FileMode{dir: os.ModeDir | 0o700, l.Path(): os.ModeSocket | 0o600, l.Path() + ".lock": 0o600} {
		fi, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v", path, fi.Mode(), want)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{l.Path(), l.Path() + ".lock"} {
		if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left after Close: %v", path, err)
		}
	}
	if _, err := Send(testCtx(t), l.Path(), mailbox.Message{From: "a", Text: "x"}); !errors.Is(err, ErrNoSession) {
		t.Errorf("Send after Close: %v, want ErrNoSession", err)
	}
}

func TestLooseDirTightened(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "sessions")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	listen(t, Config{Dir: dir})
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("dir mode %v, want 0700", fi.Mode().Perm())
	}
}

func TestConcurrentSenders(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	count := map[string]int{}
	l, _ := listen(t, Config{Handler: func(_ context.Context, m mailbox.Message) error {
		mu.Lock()
		defer mu.Unlock()
		count[m.Text]++
		return nil
	}})
	ctx := testCtx(t)
	const senders, each = 20, 50
	g, gctx := errgroup.WithContext(ctx)
	for s := range senders {
		g.Go(func() error {
			for i := range each {
				if _, err := Send(gctx, l.Path(), mailbox.Message{From: fmt.Sprintf("s%d", s), Text: fmt.Sprintf("%d/%d", s, i)}); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(count) != senders*each {
		t.Errorf("%d distinct messages delivered, want %d", len(count), senders*each)
	}
	for text, n := range count {
		if n != 1 {
			t.Errorf("message %s delivered %d times", text, n)
		}
	}
}

func TestStaleSocketReplaced(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path, err := Path(dir, "s1")
	if err != nil {
		t.Fatal(err)
	}
	// A session that died without cleaning up: the socket file stays,
	// nobody listens, and its lock file may stay too.
	old, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	old.SetUnlinkOnClose(false)
	old.Close()
	if err := os.WriteFile(path+".lock", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Send(testCtx(t), path, mailbox.Message{From: "a", Text: "x"}); !errors.Is(err, ErrNoSession) {
		t.Fatalf("Send to a stale socket: %v, want ErrNoSession", err)
	}
	l, b := listen(t, Config{Dir: dir, SessionID: "s1"})
	if _, err := Send(testCtx(t), l.Path(), mailbox.Message{From: "a", Text: "after"}); err != nil {
		t.Fatal(err)
	}
	if got := b.all(); len(got) != 1 || got[0].Text != "after" {
		t.Errorf("delivered %+v", got)
	}
}

func TestLiveSocketNotStolen(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	l, b := listen(t, Config{})
	dir := filepath.Dir(l.Path())
	if _, err := Listen(ctx, Config{Dir: dir, SessionID: "s1", Handler: b.handle}); !errors.Is(err, ErrInUse) {
		t.Errorf("second Listener on a live session: %v, want ErrInUse", err)
	}
	// The first one still works.
	if _, err := Send(ctx, l.Path(), mailbox.Message{From: "a", Text: "still here"}); err != nil {
		t.Fatal(err)
	}

	// A live socket whose owner does not take the lock is not stolen
	// either.
	foreign, err := net.ListenUnix("unix", &net.UnixAddr{Name: filepath.Join(dir, "s2.sock"), Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // answer connections, as a live peer would
		defer wg.Done()
		for {
			c, err := foreign.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	defer wg.Wait()
	defer foreign.Close()
	if _, err := Listen(ctx, Config{Dir: dir, SessionID: "s2", Handler: b.handle}); !errors.Is(err, ErrInUse) {
		t.Errorf("Listen over a foreign live socket: %v, want ErrInUse", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "s2.sock")); err != nil {
		t.Errorf("the foreign socket was removed: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "s2.sock.lock")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the failed Listen left its lock file: %v", err)
	}
}

func TestNotASocket(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "s1.sock")
	if err := os.WriteFile(path, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Listen(testCtx(t), Config{Dir: dir, SessionID: "s1", Handler: (&inbox{}).handle})
	if err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Fatalf("Listen over a regular file: %v", err)
	}
	if data, _ := os.ReadFile(path); string(data) != "keep me" {
		t.Errorf("the file was changed: %q", data)
	}
}

func TestHandlerError(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	fail := true
	calls := 0
	l, _ := listen(t, Config{Handler: func(context.Context, mailbox.Message) error {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if fail {
			return errors.New("lead inbox is full")
		}
		return nil
	}})
	ctx := testCtx(t)
	m := mailbox.Message{ID: "m-1", From: "a", Text: "x"}
	_, err := Send(ctx, l.Path(), m)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "lead inbox is full") {
		t.Fatalf("Send with a failing handler: %v", err)
	}
	mu.Lock()
	fail = false
	mu.Unlock()
	// The retry is delivered (a failure is not remembered), a repeat after
	// success is acknowledged without a second delivery.
	for range 2 {
		if id, err := Send(ctx, l.Path(), m); err != nil || id != "m-1" {
			t.Fatalf("retry: %q, %v", id, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 2 {
		t.Errorf("handler called %d times, want 2 (failure, retry)", calls)
	}
}

func TestHandlerPanic(t *testing.T) {
	t.Parallel()
	l, _ := listen(t, Config{Handler: func(context.Context, mailbox.Message) error { panic("boom") }})
	_, err := Send(testCtx(t), l.Path(), mailbox.Message{From: "a", Text: "x"})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "boom") {
		t.Errorf("Send to a panicking handler: %v", err)
	}
}

// TestDuplicateWhileDelivering: a repeat that arrives while the first copy
// is in the handler waits for it instead of delivering again.
func TestDuplicateWhileDelivering(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	calls := 0
	l, _ := listen(t, Config{Handler: func(ctx context.Context, m mailbox.Message) error {
		mu.Lock()
		calls++
		mu.Unlock()
		close(entered)
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}})
	ctx := testCtx(t)
	m := mailbox.Message{ID: "dup", From: "a", Text: "x"}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { _, err := Send(gctx, l.Path(), m); return err })
	<-entered
	g.Go(func() error { _, err := Send(gctx, l.Path(), m); return err })
	// The second Send is connected and waiting once a connection beyond
	// the first is tracked; give it that chance before releasing.
	waitConns(t, l, 2)
	close(release)
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if calls != 1 {
		t.Errorf("handler called %d times, want 1", calls)
	}
}

// waitConns waits until l has n connections.
func waitConns(t *testing.T, l *Listener, n int) {
	t.Helper()
	ctx := testCtx(t)
	for {
		l.mu.Lock()
		got := len(l.conns)
		l.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("never saw %d connections (have %d)", n, got)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func TestProtocol(t *testing.T) {
	t.Parallel()
	l, b := listen(t, Config{MaxMessageBytes: 512})
	c := dialRaw(t, l.Path())
	tests := []struct {
		line string
		want string // prefix of the reply
	}{
		{`not json`, `{"ok":false,"error":"invalid message: not a JSON message`},
		{`{"from":"a"}`, `{"ok":false,"id":`},
		{`{"text":"no sender"}`, `{"ok":false,"id":`},
		{`{"from":"a\u0007","text":"bell"}`, `{"ok":false,"id":`},
		{`{"from":"a","text":"x","type":"Bad Type"}`, `{"ok":false,"id":`},
		{`{"id":"../../etc","from":"a","text":"x"}`, `{"ok":false,"error":"invalid message: id`},
		{`{"from":"a","text":"x","to":"../lead"}`, `{"ok":false,"id":`},
		{`{"from":"a","text":"x","timestamp":"yesterday"}`, `{"ok":false,"error":"invalid message: not a JSON message`},
		{`{"from":"a","text":"` + strings.Repeat("y", 600) + `"}`, `{"ok":false,"error":"invalid message: message is larger than 512 bytes"}`},
		{`{"id":"ok-1","from":"a","text":"fine"}`, `{"ok":true,"id":"ok-1"}`},
		{`{"id":"ok-2","from":"a","text":"crlf"}` + "\r", `{"ok":true,"id":"ok-2"}`},
	}
	for _, tt := range tests {
		if got := c.roundTrip(tt.line); !strings.HasPrefix(got, tt.want) {
			t.Errorf("%.60s…\n  reply %s\n  want  %s…", tt.line, got, tt.want)
		}
	}
	// Blank lines are skipped without a reply.
	if got := c.roundTrip("\n" + `{"id":"ok-3","from":"a","text":"after blank"}`); got != `{"ok":true,"id":"ok-3"}` {
		t.Errorf("after a blank line: %s", got)
	}
	var texts []string
	for _, m := range b.all() {
		texts = append(texts, m.Text)
	}
	if diff := cmp.Diff([]string{"fine", "crlf", "after blank"}, texts); diff != "" {
		t.Errorf("delivered (-want +got):\n%s", diff)
	}
}

func TestOversizeSend(t *testing.T) {
	t.Parallel()
	l, b := listen(t, Config{MaxMessageBytes: 1 << 10})
	_, err := Send(testCtx(t), l.Path(), mailbox.Message{From: "a", Text: strings.Repeat("z", 64<<10)})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "larger than 1024 bytes") {
		t.Errorf("oversized Send: %v", err)
	}
	if n := len(b.all()); n != 0 {
		t.Errorf("%d messages delivered", n)
	}
}

func TestPeerRefused(t *testing.T) {
	t.Parallel()
	l, b := listen(t, Config{allowUID: func(int) bool { return false }})
	ctx := testCtx(t)
	_, err := Send(ctx, l.Path(), mailbox.Message{From: "a", Text: "x"})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "not the session owner") {
		t.Errorf("Send from a refused user: %v", err)
	}
	if n := len(b.all()); n != 0 {
		t.Errorf("%d messages delivered from a refused peer", n)
	}
	// The sender checks the listener's owner too.
	open, _ := listen(t, Config{SessionID: "s2"})
	_, err = send(ctx, open.Path(), mailbox.Message{From: "a", Text: "x"}, Delivery{}, func(int) bool { return false })
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "belongs to uid") {
		t.Errorf("send to another user's socket: %v", err)
	}
}

func TestSendDeadline(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "mute.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // accepts, reads, never answers
		defer wg.Done()
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		_, _ = io.Copy(io.Discard, c)
	}()
	defer wg.Wait()
	defer ln.Close()
	ctx, cancel := context.WithTimeout(testCtx(t), 100*time.Millisecond)
	defer cancel()
	_, err = Send(ctx, path, mailbox.Message{From: "a", Text: "anyone?"})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Send to a mute peer: %v, want context.DeadlineExceeded", err)
	}
}

func TestSendCancel(t *testing.T) {
	t.Parallel()
	l, _ := listen(t, Config{Handler: func(ctx context.Context, m mailbox.Message) error {
		<-ctx.Done() // until Close
		return ctx.Err()
	}})
	ctx, cancel := context.WithCancel(testCtx(t))
	done := make(chan error, 1)
	go func() {
		_, err := Send(ctx, l.Path(), mailbox.Message{From: "a", Text: "x"})
		done <- err
	}()
	waitConns(t, l, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Send: %v, want context.Canceled", err)
	}
}

// TestCloseWhileBusy: Close ends idle connections and handlers that wait
// on their context, and returns.
func TestCloseWhileBusy(t *testing.T) {
	t.Parallel()
	entered := make(chan struct{})
	l, err := Listen(testCtx(t), Config{Dir: t.TempDir(), SessionID: "s1", Handler: func(ctx context.Context, m mailbox.Message) error {
		close(entered)
		<-ctx.Done()
		return ctx.Err()
	}})
	if err != nil {
		t.Fatal(err)
	}
	idle := dialRaw(t, l.Path())
	done := make(chan error, 1)
	go func() {
		_, err := Send(testCtx(t), l.Path(), mailbox.Message{From: "a", Text: "x"})
		done <- err
	}()
	<-entered
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil {
		t.Error("Send whose handler was cut short by Close succeeded")
	}
	if _, err := idle.br.ReadString('\n'); !errors.Is(err, io.EOF) {
		t.Errorf("idle connection after Close: %v, want EOF", err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestIdleTimeout(t *testing.T) {
	t.Parallel()
	l, _ := listen(t, Config{IdleTimeout: 50 * time.Millisecond})
	c := dialRaw(t, l.Path())
	if got := c.roundTrip(`{"id":"i1","from":"a","text":"x"}`); got != `{"ok":true,"id":"i1"}` {
		t.Fatalf("reply %s", got)
	}
	if _, err := c.br.ReadString('\n'); !errors.Is(err, io.EOF) {
		t.Errorf("idle connection: %v, want EOF once it idled out", err)
	}
}

func TestMaxConns(t *testing.T) {
	t.Parallel()
	l, _ := listen(t, Config{MaxConns: 1})
	dialRaw(t, l.Path())
	waitConns(t, l, 1)
	extra := dialRaw(t, l.Path())
	if got := extra.read(); !strings.Contains(got, "too many connections") {
		t.Errorf("connection beyond the limit: %s", got)
	}
}

func TestPathErrors(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"", "..", "../x", "a/b", ".hidden", "-x", "a b", strings.Repeat("a", 129), "a\x00"} {
		if _, err := Path("/tmp", id); !errors.Is(err, ErrInvalidSessionID) {
			t.Errorf("Path(%q): %v, want ErrInvalidSessionID", id, err)
		}
	}
	if p, err := Path("/home/me/.cohort/sessions", "0b4c7f3e-58a2-4f5e-9d1a-6c2b8e7f9a10"); err != nil || p != "/home/me/.cohort/sessions/0b4c7f3e-58a2-4f5e-9d1a-6c2b8e7f9a10.sock" {
		t.Errorf("Path = %q, %v", p, err)
	}
	long := "/" + strings.Repeat("d", 90)
	_, err := Path(long, "0b4c7f3e-58a2-4f5e-9d1a-6c2b8e7f9a10")
	if err == nil || !strings.Contains(err.Error(), "at most 107") || !strings.Contains(err.Error(), "COHORT_HOME") {
		t.Errorf("long path: %v", err)
	}
	if _, err := Listen(testCtx(t), Config{Dir: long, SessionID: "0b4c7f3e-58a2-4f5e-9d1a-6c2b8e7f9a10", Handler: (&inbox{}).handle}); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("Listen on a long path: %v", err)
	}
	if _, err := Send(testCtx(t), long+"/"+strings.Repeat("x", 20)+".sock", mailbox.Message{From: "a", Text: "x"}); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("Send to a long path: %v", err)
	}
	if _, err := Send(testCtx(t), filepath.Join(t.TempDir(), "none.sock"), mailbox.Message{From: "a", Text: "x"}); !errors.Is(err, ErrNoSession) {
		t.Errorf("Send to a missing socket: %v, want ErrNoSession", err)
	}
	if _, err := Send(testCtx(t), "/x.sock", mailbox.Message{Text: "no sender"}); !errors.Is(err, mailbox.ErrInvalidMessage) {
		t.Errorf("Send of an invalid message: %v, want ErrInvalidMessage", err)
	}
	if _, err := Listen(testCtx(t), Config{Dir: t.TempDir(), SessionID: "s"}); err == nil {
		t.Error("Listen without a handler")
	}
	if _, err := Listen(testCtx(t), Config{Dir: t.TempDir(), SessionID: "s", Handler: (&inbox{}).handle, Recipient: "../lead"}); !errors.Is(err, mailbox.ErrInvalidName) {
		t.Errorf("Listen with a bad recipient: %v", err)
	}
}

func TestPeerFrom(t *testing.T) {
	t.Parallel()
	peers := make(chan Peer, 1)
	l, _ := listen(t, Config{Handler: func(ctx context.Context, m mailbox.Message) error {
		p, ok := PeerFrom(ctx)
		if !ok {
			return errors.New("no peer in the context")
		}
		peers <- p
		return nil
	}})
	if _, err := Send(testCtx(t), l.Path(), mailbox.Message{From: "a", Text: "x"}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Peer{UID: os.Geteuid(), PID: os.Getpid()}, <-peers); diff != "" {
		t.Errorf("peer (-want +got):\n%s", diff)
	}
	if _, ok := PeerFrom(context.Background()); ok {
		t.Error("PeerFrom found a peer in a bare context")
	}
}
